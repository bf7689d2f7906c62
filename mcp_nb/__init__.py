"""mcp_nb: a Jupyter-integrated Model Context Protocol client and teaching kit."""

__version__ = "0.1.0"
