"""``logging/setLevel`` levels, without the pydantic models (a server imports these too).

Example::

    >>> from mcp_nb.protocol.log_levels import LOG_LEVELS
    >>> LOG_LEVELS.index("warning") > LOG_LEVELS.index("info")
    True
"""

#: ``logging/setLevel`` levels: RFC 5424 severities, least severe first.
LOG_LEVELS: tuple[str, ...] = (
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency",
)
