"""mcp_nb: a Jupyter-integrated Model Context Protocol client and teaching kit."""

__version__ = "0.1.0"


def load_ipython_extension(ipython):  # type: ignore[no-untyped-def]
    """``%load_ext mcp_nb``: register the ``%mcp`` magics."""
    from .notebook import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython):  # type: ignore[no-untyped-def]
    """``%unload_ext mcp_nb``: shut every session down."""
    from .notebook import unload_ipython_extension as unload

    unload(ipython)
