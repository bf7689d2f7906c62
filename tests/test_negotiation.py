"""Versions as data, version and capability negotiation, and the typed payload models."""

from __future__ import annotations

import pytest

from mcp_nb.protocol.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    CapabilityError,
    McpError,
    UnsupportedVersionError,
)
from mcp_nb.protocol.models import CallToolResult, InitializeResult
from mcp_nb.protocol.negotiation import (
    Capabilities,
    VersionOutcome,
    check_version,
    negotiate_version,
    version_rejection,
)
from mcp_nb.protocol.versions import (
    LATEST_VERSION,
    SUPPORTED_VERSIONS,
    VERSIONS,
    ProtocolVersion,
    is_supported,
    version_info,
)

ALL_FOUR = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

# -- versions --------------------------------------------------------------------------------


def test_the_four_versions_in_order():
    assert SUPPORTED_VERSIONS == ALL_FOUR
    assert tuple(VERSIONS) == ALL_FOUR
    assert list(SUPPORTED_VERSIONS) == sorted(SUPPORTED_VERSIONS)
    assert LATEST_VERSION == "2025-11-25"
    assert all(VERSIONS[name].name == name for name in ALL_FOUR)
    assert str(VERSIONS["2025-06-18"]) == "2025-06-18"


@pytest.mark.parametrize(
    ("feature", "expected"),
    [
        # Batches existed only in 2025-03-26.
        ("allows_batching", [False, True, False, False]),
        # The MCP-Protocol-Version HTTP header from 2025-06-18 on.
        ("http_version_header", [False, False, True, True]),
        ("streamable_http", [False, True, True, True]),
        ("has_completions_capability", [False, True, True, True]),
        ("has_titles", [False, False, True, True]),
        ("has_elicitation", [False, False, True, True]),
        ("has_structured_output", [False, False, True, True]),
        ("has_icons", [False, False, False, True]),
    ],
)
def test_version_features(feature, expected):
    assert [getattr(VERSIONS[name], feature) for name in ALL_FOUR] == expected


def test_is_supported():
    assert all(is_supported(v) for v in ALL_FOUR)
    assert not is_supported("1.0.0")
    assert not is_supported("2025-11-26")


def test_version_info():
    info = version_info("2025-03-26")
    assert isinstance(info, ProtocolVersion)
    assert info is VERSIONS["2025-03-26"]


def test_version_info_key_error_names_supported_versions():
    with pytest.raises(KeyError) as info:
        version_info("1.0.0")
    text = info.value.args[0]
    assert text == (
        "unknown MCP protocol version '1.0.0'; "
        "supported: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25"
    )


def test_protocol_versions_are_immutable():
    with pytest.raises(AttributeError):
        VERSIONS["2025-03-26"].allows_batching = False  # type: ignore[misc]


# -- version negotiation ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("offered", "answered", "outcome", "ok"),
    [
        ("2025-11-25", "2025-11-25", "agreed", True),
        ("2024-11-05", "2024-11-05", "agreed", True),
        ("2025-11-25", "2025-06-18", "counter-offer accepted", True),
        ("2024-11-05", "2025-11-25", "counter-offer accepted", True),
        # A teaching client may offer anything; a server echoing junk is still unsupported.
        ("1.0.0", "1.0.0", "unsupported", False),
        ("2025-11-25", "2099-01-01", "unsupported", False),
        ("2025-11-25", "", "unsupported", False),
    ],
)
def test_negotiate_version(offered, answered, outcome, ok):
    result = negotiate_version(offered, answered)
    assert result == VersionOutcome(offered, answered, outcome)
    assert result.ok is ok


def test_negotiate_version_with_a_narrower_supported_set():
    supported = ("2025-06-18",)
    assert negotiate_version("2025-06-18", "2025-11-25", supported).outcome == "unsupported"
    assert negotiate_version("2025-11-25", "2025-06-18", supported).outcome == (
        "counter-offer accepted"
    )


def test_check_version_returns_the_outcome_when_ok():
    assert check_version("2025-11-25", "2025-03-26") == VersionOutcome(
        "2025-11-25", "2025-03-26", "counter-offer accepted"
    )


@pytest.mark.parametrize(("offered", "answered"), [("1.0.0", "1.0.0"),
                                                   ("2025-11-25", "2099-01-01")])
def test_check_version_raises_naming_everything(offered, answered):
    with pytest.raises(UnsupportedVersionError) as info:
        check_version(offered, answered)
    error = info.value
    text = str(error)
    assert f"offered {offered!r}" in text
    assert f"the server answered {answered!r}" in text
    for version in SUPPORTED_VERSIONS:
        assert version in text
    assert "disconnected" in text
    assert (error.offered, error.answered, error.supported) == (
        offered, answered, SUPPORTED_VERSIONS
    )
    assert error.code == INVALID_PARAMS
    assert isinstance(error, McpError)


@pytest.mark.parametrize("answered", [None, 20251125, ["2025-11-25"], {"v": "2025-11-25"}])
def test_check_version_non_string_answer(answered):
    with pytest.raises(UnsupportedVersionError) as info:
        check_version("2025-11-25", answered)
    assert info.value.answered == repr(answered)
    assert f"the server answered {repr(answered)!r}" in str(info.value)


def test_version_rejection_recognised_by_data_supported():
    error = version_rejection(
        "1.0.0", -32602, "Invalid params",
        {"supported": ["2025-06-18", "2025-11-25"], "requested": "1.0.0"},
    )
    assert isinstance(error, UnsupportedVersionError)
    assert error.answered is None
    assert error.server_supported == ["2025-06-18", "2025-11-25"]
    text = str(error)
    assert "the server rejected protocol version '1.0.0'" in text
    assert "the server supports 2025-06-18, 2025-11-25" in text
    for version in SUPPORTED_VERSIONS:
        assert version in text


def test_version_rejection_recognised_by_message():
    error = version_rejection("1.0.0", INVALID_PARAMS, "Unsupported protocol version", None)
    assert isinstance(error, UnsupportedVersionError)
    assert error.server_supported is None
    assert "the server supports" not in str(error)
    assert "-32602 Unsupported protocol version" in str(error)


def test_version_rejection_ignores_a_non_list_supported_without_version_message():
    assert version_rejection("1.0.0", INVALID_PARAMS, "Invalid params",
                             {"supported": "2025-11-25"}) is None


@pytest.mark.parametrize(
    ("code", "message", "data"),
    [
        (INVALID_REQUEST, "Unsupported protocol version", {"supported": ["2025-11-25"]}),
        (METHOD_NOT_FOUND, "Unsupported protocol version", None),
        (-32603, "Internal error: version", None),
        (INVALID_PARAMS, "missing clientInfo", None),
        (INVALID_PARAMS, "missing clientInfo", {"field": "clientInfo"}),
    ],
)
def test_version_rejection_ignores_other_errors(code, message, data):
    assert version_rejection("2025-11-25", code, message, data) is None


# -- capabilities ----------------------------------------------------------------------------

SERVER_METHODS = [
    ("tools/list", "tools", None),
    ("tools/call", "tools", None),
    ("resources/list", "resources", None),
    ("resources/templates/list", "resources", None),
    ("resources/read", "resources", None),
    ("resources/subscribe", "resources", "subscribe"),
    ("resources/unsubscribe", "resources", "subscribe"),
    ("prompts/list", "prompts", None),
    ("prompts/get", "prompts", None),
    ("logging/setLevel", "logging", None),
    ("completion/complete", "completions", None),
]


@pytest.mark.parametrize(("method", "capability", "flag"), SERVER_METHODS)
def test_server_supports(method, capability, flag):
    nothing = Capabilities(client={}, server={})
    assert nothing.required_for(method) == (capability, flag)
    assert not nothing.server_supports(method)

    declared = Capabilities(client={}, server={capability: {}})
    assert declared.server_supports(method) is (flag is None)

    with_flag = Capabilities(client={}, server={capability: {flag or "x": True}})
    assert with_flag.server_supports(method)

    others = {name: {"subscribe": True, "listChanged": True}
              for _, name, _ in SERVER_METHODS if name != capability}
    assert not Capabilities(client={}, server=others).server_supports(method)


@pytest.mark.parametrize("value", [False, "true", 1, None])
def test_subscribe_flag_must_be_true(value):
    caps = Capabilities(client={}, server={"resources": {"subscribe": value}})
    assert caps.server_supports("resources/read")
    assert not caps.server_supports("resources/subscribe")


@pytest.mark.parametrize("method", ["ping", "initialize", "notifications/initialized",
                                    "some/custom/method"])
def test_methods_that_need_no_capability(method):
    caps = Capabilities(client={}, server={})
    assert caps.required_for(method) is None
    assert caps.server_supports(method)
    caps.check_request(method)  # does not raise


@pytest.mark.parametrize(
    ("version", "needed"),
    [("2024-11-05", False), ("2025-03-26", True), ("2025-06-18", True), ("2025-11-25", True),
     (None, True), ("1.0.0", True)],
)
def test_completions_capability_depends_on_version(version, needed):
    caps = Capabilities(client={}, server={}, version=version)
    assert caps.server_supports("completion/complete") is not needed
    assert caps.required_for("completion/complete") == (
        ("completions", None) if needed else None
    )
    if needed:
        with pytest.raises(CapabilityError):
            caps.check_request("completion/complete")
    else:
        caps.check_request("completion/complete")


def test_boolean_capability_counts_as_declared_without_flags():
    caps = Capabilities(client={"roots": True}, server={"tools": True, "resources": True,
                                                       "prompts": False})
    assert caps.server_supports("tools/call")
    assert caps.server_supports("resources/read")
    assert not caps.server_supports("resources/subscribe")
    assert not caps.server_supports("prompts/list")
    assert caps.client_supports("roots/list")


def test_check_request_message():
    caps = Capabilities(client={}, server={"tools": {}})
    caps.check_request("tools/call")
    with pytest.raises(CapabilityError) as info:
        caps.check_request("prompts/get")
    text = str(info.value)
    assert "the server did not declare the 'prompts' capability" in text
    assert "'prompts/get' may not be sent" in text
    assert "force=True" in text
    assert info.value.code == METHOD_NOT_FOUND
    # The refusal as data: the rule it enforces and what overrides it; another spelling
    # of the override goes inside the sentence where the Python API's went.
    assert (info.value.rule, info.value.override) == ("capability-not-negotiated", "force")
    assert text.endswith("; pass force=True to send it anyway and record a finding")
    assert info.value.worded(clause="add --force", aside=" (add --force)") == (
        "the server did not declare the 'prompts' capability, so 'prompts/get' may not be sent "
        "(use only negotiated capabilities); add --force and record a finding")


def test_check_request_message_names_the_sub_flag():
    caps = Capabilities(client={}, server={"resources": {}})
    with pytest.raises(CapabilityError, match=r"'resources\.subscribe' capability"):
        caps.check_request("resources/subscribe")


@pytest.mark.parametrize(
    ("method", "capability"),
    [("roots/list", "roots"), ("sampling/createMessage", "sampling"),
     ("elicitation/create", "elicitation")],
)
def test_client_supports(method, capability):
    assert not Capabilities(client={}, server={}).client_supports(method)
    assert Capabilities(client={capability: {}}, server={}).client_supports(method)
    others = {c: {} for c in ("roots", "sampling", "elicitation") if c != capability}
    assert not Capabilities(client=others, server={}).client_supports(method)
    # The server's declarations say nothing about what the client supports.
    assert not Capabilities(client={}, server={capability: {}}).client_supports(method)


def test_client_supports_requests_needing_nothing():
    caps = Capabilities(client={}, server={})
    assert caps.client_supports("ping")


@pytest.mark.parametrize(
    ("method", "server", "allowed"),
    [
        ("notifications/tools/list_changed", {"tools": {}}, False),
        ("notifications/tools/list_changed", {"tools": {"listChanged": False}}, False),
        ("notifications/tools/list_changed", {"tools": {"listChanged": True}}, True),
        ("notifications/resources/list_changed", {"resources": {"subscribe": True}}, False),
        ("notifications/resources/list_changed", {"resources": {"listChanged": True}}, True),
        ("notifications/prompts/list_changed", {"tools": {"listChanged": True}}, False),
        ("notifications/prompts/list_changed", {"prompts": {"listChanged": True}}, True),
        ("notifications/resources/updated", {"resources": {"listChanged": True}}, False),
        ("notifications/resources/updated", {"resources": {"subscribe": True}}, True),
        ("notifications/message", {}, False),
        ("notifications/message", {"tools": {}}, False),
        ("notifications/message", {"logging": {}}, True),
        # Notifications not tied to a capability are always consistent.
        ("notifications/progress", {}, True),
        ("notifications/cancelled", {}, True),
    ],
)
def test_notification_allowed(method, server, allowed):
    assert Capabilities(client={}, server=server).notification_allowed(method) is allowed


def test_list_changed():
    caps = Capabilities(client={}, server={
        "tools": {"listChanged": True},
        "resources": {"listChanged": False, "subscribe": True},
        "prompts": {},
    })
    assert caps.list_changed("tools")
    assert not caps.list_changed("resources")
    assert not caps.list_changed("prompts")
    assert not caps.list_changed("logging")


def test_table_rows():
    caps = Capabilities(
        client={"roots": {"listChanged": True}, "sampling": {}},
        server={"tools": {"listChanged": True}, "logging": {}},
    )
    assert caps.table() == [
        {"capability": "tools", "side": "server", "declared": True,
         "options": {"listChanged": True}},
        {"capability": "resources", "side": "server", "declared": False, "options": None},
        {"capability": "prompts", "side": "server", "declared": False, "options": None},
        {"capability": "logging", "side": "server", "declared": True, "options": {}},
        {"capability": "completions", "side": "server", "declared": False, "options": None},
        {"capability": "roots", "side": "client", "declared": True,
         "options": {"listChanged": True}},
        {"capability": "sampling", "side": "client", "declared": True, "options": {}},
        {"capability": "elicitation", "side": "client", "declared": False, "options": None},
    ]


# -- models ----------------------------------------------------------------------------------


def test_initialize_result_keeps_unknown_fields():
    payload = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {"listChanged": True}, "futureCapability": {"x": 1}},
        "serverInfo": {"name": "demo", "version": "1.0", "vendorField": "v"},
        "instructions": "be nice",
        "_meta": {"trace": "abc"},
    }
    result = InitializeResult.model_validate(payload)
    assert result.protocolVersion == "2025-11-25"
    assert result.capabilities.tools == {"listChanged": True}
    assert result.serverInfo.name == "demo"
    assert result.model_extra == {"_meta": {"trace": "abc"}}
    assert result.capabilities.model_extra == {"futureCapability": {"x": 1}}
    assert result.serverInfo.model_extra == {"vendorField": "v"}
    assert result.model_dump(exclude_none=True) == payload


def test_initialize_result_requires_its_fields():
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="serverInfo"):
        InitializeResult.model_validate({"protocolVersion": "2025-11-25", "capabilities": {}})


def test_call_tool_result_text_joins_text_blocks():
    result = CallToolResult.model_validate({
        "content": [
            {"type": "text", "text": "first"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "text", "text": "second\nline"},
            {"type": "resource", "resource": {"uri": "file:///x", "text": "not a text block"}},
            {"type": "text"},
        ],
    })
    assert result.text == "first\nsecond\nline\n"
    assert result.isError is False
    assert result.structuredContent is None


def test_call_tool_result_defaults():
    empty = CallToolResult.model_validate({})
    assert empty.text == ""
    assert empty.content == []
    # The default list is not shared between instances.
    empty.content.append({"type": "text", "text": "x"})
    assert CallToolResult.model_validate({}).content == []
