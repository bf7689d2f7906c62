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


def start_lab(*flags: str, timeout: float = 30.0):  # type: ignore[no-untyped-def]
    """Start the bundled lab server over HTTP on a free port; it ends with the kernel.

    ::

        lab = start_lab("--auth")
        %mcp connect web {lab.url} --auth
        lab.stop()

    See :func:`mcp_nb.transports.local_server.start_lab`.
    """
    from .transports.local_server import start_lab as start

    return start(*flags, timeout=timeout)
