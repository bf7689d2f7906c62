"""Every check the checkup runs, by area, with the rule it enforces (the spec's words).

Each rule's level is the cited sentence's RFC 2119 keyword when the sentence says it to the
server, ``MUST (schema)`` when only the schema's types say it, and ``inferred`` when the kit
reads it from what the spec implies (the ``note`` says how); tests/test_check.py holds every
rule to that, and docs/checkup.md lists them.  Where the two directions of a capability have
different words (support ⇒ declare is a MUST; declare ⇒ serve is 2026-07-28's MUST and earlier
revisions' silence) they are two checks.

Example::

    >>> CHECKS["capabilities.tools"].rule.level
    'MUST'
"""

from __future__ import annotations

from ..i18n import N_
from .model import Check, Level, SpecRule


def _rule(revision: str, section: str, level: Level, quote: str,
          note: str | None = None) -> SpecRule:
    return SpecRule(revision, section, level, quote, note=note)



_R = "2025-11-25"
#: MCP Apps (SEP-1865): its stable revision and where its text is.
APPS_REVISION = "2026-01-26"
APPS_SPEC = ("https://github.com/modelcontextprotocol/ext-apps/blob/main/specification/"
             f"{APPS_REVISION}/apps.mdx")

_CHECK_LIST = (
    Check("lifecycle.initialize-result", "lifecycle",
          N_("initialize answered with capabilities and server information"),
          _rule(_R, "basic/lifecycle#initialization", "MUST",
                "The server MUST respond with its own capabilities and information."),
          N_("Answer initialize with a result that carries capabilities and serverInfo.")),
    Check("lifecycle.initialize-result-types", "lifecycle",
          N_("initialize result fields typed as the schema says"),
          _rule(_R, "schema#initializeresult", "MUST (schema)",
                "InitializeResult: protocolVersion: string; capabilities: ServerCapabilities; "
                "serverInfo: Implementation (name: string; version: string).",
                "The schema's types, no sentence with a keyword: the sentence asks for the "
                "capabilities and the information to be there (lifecycle.initialize-result), "
                "not for their types."),
          N_("Answer initialize with protocolVersion a string, capabilities an object and "
          "serverInfo an object whose name and version are strings.")),
    Check("lifecycle.version-answer", "lifecycle",
          N_("the answered version is one the spec defines"),
          _rule(_R, "basic/lifecycle#version-negotiation", "MUST",
                "If the server supports the requested protocol version, it MUST respond with "
                "the same version. Otherwise, the server MUST respond with another protocol "
                "version it supports."),
          N_("Echo the client's version when you support it; never answer a version that does "
          "not exist.")),
    Check("lifecycle.unknown-version", "lifecycle",
          N_("an unknown version offered gets a counter-offer"),
          _rule(_R, "basic/lifecycle#version-negotiation", "MUST",
                "Otherwise, the server MUST respond with another protocol version it "
                "supports. This SHOULD be the latest version supported by the server."),
          N_("When the offered version is unknown, answer initialize with your latest supported "
          "version instead of an error.")),
    Check("lifecycle.ping", "lifecycle", N_("ping answered"),
          _rule(_R, "basic/utilities/ping#behavior-requirements", "MUST",
                "The receiver MUST respond promptly with an empty response."),
          N_("Answer ping at once with an empty result {}, even while other work is running.")),
    Check("lifecycle.requests-before-initialized", "lifecycle",
          N_("no requests but ping before initialized"),
          _rule(_R, "basic/lifecycle#initialization", "SHOULD",
                "The server SHOULD NOT send requests other than pings and logging before "
                "receiving the initialized notification."),
          N_("Wait for notifications/initialized before sending the client requests.")),
    Check("lifecycle.shutdown", "lifecycle", N_("stdio: the server exits when its stdin closes"),
          _rule(_R, "basic/lifecycle#stdio", "inferred",
                "For the stdio transport, the client SHOULD initiate shutdown by: First, "
                "closing the input stream to the child process (the server); Waiting for the "
                "server to exit, or sending SIGTERM if the server does not exit within a "
                "reasonable time …",
                "The sentence is the client's: no sentence obliges the server itself, but "
                "exiting at EOF is what this sequence waits for, so a server that needs "
                "SIGTERM only warns."),
          N_("Exit when stdin reaches EOF (finish or cancel in-flight work first) instead of "
          "waiting for a signal.")),
    Check("lifecycle.discover-probe", "lifecycle",
          N_("a server/discover probe before initialize leaves the server running"),
          _rule("2026-07-28", "basic/transports/stdio#backward-compatibility", "inferred",
                "The fallback MUST NOT be keyed to one specific error code: legacy servers "
                "respond to unknown pre-initialize requests with implementation-defined errors "
                "(commonly -32601 or -32602) or not at all.",
                "The MUST is the client's, and the sentence describes legacy servers without "
                "obliging them (2025-11-25 even tells clients to send nothing but ping before "
                "initialize). But this revision tells a client to probe before anything else "
                "and then fall back to initialize, which a server that exited cannot take: so "
                "exiting warns."),
          N_("Answer a request you do not know with error -32601 (Method not found), also "
          "before initialize, instead of exiting.")),
    Check("capabilities.tools", "capabilities",
          N_("tools: tools/list answered ⇒ tools declared"),
          _rule(_R, "server/tools#capabilities", "MUST",
                "Servers that support tools MUST declare the `tools` capability."),
          N_("Declare the tools capability in initialize when you answer tools/list.")),
    Check("capabilities.tools-served", "capabilities",
          N_("tools: declared ⇒ tools/list served"),
          _rule("2026-07-28", "server/tools#capabilities", "MUST",
                "Servers that declare the `tools` capability MUST respond to `tools/list` "
                "requests with the set of tools currently available to the requesting client.",
                "2025-11-25 has no such sentence: on a session of that revision (the handshake "
                "era) a declared list that is refused only warns."),
          N_("Answer tools/list when you declare tools, or stop declaring it.")),
    Check("capabilities.resources", "capabilities",
          N_("resources: resources/list answered ⇒ resources declared"),
          _rule(_R, "server/resources#capabilities", "MUST",
                "Servers that support resources MUST declare the `resources` capability."),
          N_("Declare the resources capability in initialize when you answer "
          "resources/list.")),
    Check("capabilities.resources-served", "capabilities",
          N_("resources: declared ⇒ resources/list served"),
          _rule("2026-07-28", "server/resources#capabilities", "MUST",
                "Servers that declare the `resources` capability MUST respond to "
                "`resources/list` requests",
                "2025-11-25 has no such sentence: on a session of that revision (the handshake "
                "era) a declared list that is refused only warns."),
          N_("Answer resources/list when you declare resources, or stop declaring it.")),
    Check("capabilities.prompts", "capabilities",
          N_("prompts: prompts/list answered ⇒ prompts declared"),
          _rule(_R, "server/prompts#capabilities", "MUST",
                "Servers that support prompts MUST declare the `prompts` capability during "
                "initialization"),
          N_("Declare the prompts capability in initialize when you answer prompts/list.")),
    Check("capabilities.prompts-served", "capabilities",
          N_("prompts: declared ⇒ prompts/list served"),
          _rule("2026-07-28", "server/prompts#capabilities", "MUST",
                "Servers that declare the `prompts` capability MUST respond to `prompts/list` "
                "requests",
                "2025-11-25 has no such sentence: on a session of that revision (the handshake "
                "era) a declared list that is refused only warns."),
          N_("Answer prompts/list when you declare prompts, or stop declaring it.")),
    Check("capabilities.completions", "capabilities",
          N_("completions: completion/complete answered ⇒ completions declared"),
          _rule(_R, "server/utilities/completion#capabilities", "MUST",
                "Servers that support completions MUST declare the `completions` "
                "capability."),
          N_("Declare the completions capability in initialize when you answer "
          "completion/complete.")),
    Check("capabilities.completions-served", "capabilities",
          N_("completions: declared ⇒ completion/complete served"),
          _rule(_R, "server/utilities/completion#error-handling", "inferred",
                "Servers SHOULD return standard JSON-RPC errors for common failure cases: "
                "Method not found: -32601 (Capability not supported)",
                "No sentence obliges a server that declares completions to answer them; "
                "clients rely on what was negotiated, so a declared capability that is "
                "refused warns."),
          N_("Answer completion/complete when you declare completions, or stop declaring it.")),
    Check("capabilities.logging", "capabilities",
          N_("logging: notifications/message sent ⇒ logging declared"),
          _rule(_R, "server/utilities/logging#capabilities", "MUST",
                "Servers that emit log message notifications MUST declare the `logging` "
                "capability."),
          N_("Declare the logging capability in initialize when you send "
          "notifications/message.")),
    Check("capabilities.logging-served", "capabilities",
          N_("logging: declared ⇒ logging/setLevel accepts every level"),
          _rule(_R, "server/utilities/logging#setting-log-level", "inferred",
                "To configure the minimum log level, clients MAY send a `logging/setLevel` "
                "request",
                "The sentence is the client's; that a server declaring logging accepts each "
                "of the schema's eight LoggingLevel values is the kit's reading, so a refusal "
                "warns."),
          N_("Accept logging/setLevel with each of the eight RFC 5424 levels when you declare "
          "logging; leave logging out otherwise.")),
    Check("tools.names", "tools", N_("tool names follow the naming rules"),
          _rule(_R, "server/tools#tool-names", "SHOULD",
                "Tool names SHOULD be between 1 and 128 characters in length (inclusive). "
                "The following SHOULD be the only allowed characters: uppercase and lowercase "
                "ASCII letters (A-Z, a-z), digits (0-9), underscore (_), hyphen (-), and dot "
                "(.) Tool names SHOULD be unique within a server."),
          N_("Rename tools to 1 to 128 characters of A-Z a-z 0-9 _ - . and keep names unique.")),
    Check("tools.input-schema", "tools", N_("inputSchema is a valid JSON Schema object schema"),
          _rule(_R, "server/tools#tool", "MUST",
                "inputSchema: JSON Schema defining expected parameters … Defaults to 2020-12 "
                "if no $schema field is present … MUST be a valid JSON Schema object (not "
                "null). (basic#json-schema-usage: Schemas MUST be valid according to their "
                "declared or default dialect.)",
                "A schema whose type is not \"object\" breaks the schema's Tool.inputSchema "
                "(type: \"object\"), not a sentence: on its own it warns."),
          N_("Give every tool an inputSchema such as {\"type\": \"object\"} that validates as "
          "JSON Schema (2020-12 unless $schema says otherwise).")),
    Check("tools.output-schema", "tools", N_("outputSchema valid, structuredContent conforms"),
          _rule(_R, "server/tools#output-schema", "MUST",
                "If an output schema is provided: Servers MUST provide structured results "
                "that conform to this schema. (basic#json-schema-usage: Schemas MUST be valid "
                "according to their declared or default dialect.)"),
          N_("Make outputSchema valid JSON Schema and return structuredContent that "
          "validates against it.")),
    Check("tools.output-schema-type", "tools", N_("outputSchema is an object schema"),
          _rule(_R, "schema#tool", "MUST (schema)",
                "Tool: outputSchema?: { $schema?: string; type: \"object\"; properties?: "
                "{ [key: string]: object }; required?: string[] }.",
                "The schema's type, no sentence with a keyword: an outputSchema that is valid "
                "JSON Schema of another type only warns (structuredContent is still compared "
                "with it, by tools.output-schema)."),
          N_("Give outputSchema type \"object\": structuredContent is a JSON object.")),
    Check("tools.annotations", "tools", N_("annotations well-formed"),
          _rule(_R, "schema#toolannotations", "MUST (schema)",
                "ToolAnnotations: title?: string; readOnlyHint?: boolean; destructiveHint?: "
                "boolean; idempotentHint?: boolean; openWorldHint?: boolean.",
                "The schema is the source of truth for messages (basic#schema), but no "
                "sentence with a keyword says it: a Tool that breaks its types warns."),
          N_("Send annotations as an object whose hints are booleans and title a string.")),
    Check("tools.input-errors", "tools", N_("arguments breaking inputSchema get an isError result"),
          _rule(_R, "server/tools#error-handling", "inferred",
                "Tool Execution Errors: Reported in tool results with isError: true: … Input "
                "validation errors (e.g., date in wrong format, value out of range) …",
                "No keyword: the changelog only says input validation errors \"should be "
                "returned as Tool Execution Errors\", in lower case."),
          N_("Answer arguments that break the inputSchema with a result {isError: true} saying "
          "what is wrong, so the model can retry.")),
    Check("tools.unknown-tool", "tools", N_("an unknown tool name gets a JSON-RPC error"),
          _rule(_R, "server/tools#error-handling", "inferred",
                "Protocol Errors: Standard JSON-RPC errors for issues like: Unknown tools … "
                "Example protocol error: {\"code\": -32602, \"message\": \"Unknown tool: "
                "invalid_tool_name\"}",
                "The sentence carries no MUST or SHOULD: a deviation only warns."),
          N_("Answer tools/call for a name you do not list with a JSON-RPC error (-32602 "
          "\"Unknown tool\"), not a result.")),
    Check("tools.progress", "tools", N_("progress echoes the token and increases"),
          _rule(_R, "basic/utilities/progress#progress-flow", "MUST",
                "The progress value MUST increase with each notification, even if the total "
                "is unknown. … Progress notifications MUST only reference tokens that: Were "
                "provided in an active request; Are associated with an in-progress operation"),
          N_("Send notifications/progress with the request's own progressToken and a progress "
          "value larger than the last one.")),
    Check("tools.cancellation", "tools", N_("a cancelled call is not answered"),
          _rule(_R, "basic/utilities/cancellation#behavior-requirements", "SHOULD",
                "Receivers of cancellation notifications SHOULD: Stop processing the cancelled "
                "request; Free associated resources; Not send a response for the cancelled "
                "request"),
          N_("On notifications/cancelled stop the request's work and send no response for it.")),
    Check("lists.pagination", "lists", N_("nextCursor round-trips"),
          _rule(_R, "server/utilities/pagination#implementation-guidelines", "SHOULD",
                "Servers SHOULD: Provide stable cursors; Handle invalid cursors gracefully."),
          N_("Make every nextCursor you hand out fetch the next page when sent back as cursor.")),
    Check("lists.list-changed", "lists",
          N_("list_changed sent only for lists declared listChanged"),
          _rule(_R, "basic/lifecycle#operation", "MUST",
                "Both parties MUST: Respect the negotiated protocol version; Only use "
                "capabilities that were successfully negotiated",
                "server/tools: servers that declared the listChanged capability SHOULD send a "
                "notification; sending one undeclared uses a capability not negotiated."),
          N_("Declare listChanged on tools, resources or prompts before sending their "
          "notifications/…/list_changed (and send one whenever that list changes).")),
    Check("resources.uris", "resources", N_("resource URIs are RFC 3986 URIs"),
          _rule(_R, "server/resources#custom-uri-schemes", "MUST",
                "Custom URI schemes MUST be in accordance with RFC3986, taking the above "
                "guidance in to account."),
          N_("List resources under absolute URIs (scheme:rest, spaces and other characters "
          "outside RFC 3986 percent-encoded).")),
    Check("resources.list-types", "resources",
          N_("listed resources typed as the schema says"),
          _rule(_R, "schema#resource", "MUST (schema)",
                "Resource extends BaseMetadata: uri: string (@format uri); mimeType?: string.",
                "The schema's types, no sentence with a keyword: a resource without a string "
                "uri, or with a mimeType that is not a string, warns."),
          N_("List each resource with uri a string and, if given, mimeType a string.")),
    Check("resources.read", "resources", N_("resources/read of a listed resource answers it"),
          _rule(_R, "schema#readresourceresult", "MUST (schema)",
                "ReadResourceResult: contents: (TextResourceContents | "
                "BlobResourceContents)[]; ResourceContents: uri: string (The URI of this "
                "resource.); text: string or blob: string.",
                "The schema's types, no sentence with a keyword; a content under another uri "
                "than the one read is a warning too."),
          N_("Answer resources/read with contents [{uri: the URI read, text or blob: a "
          "string}].")),
    Check("resources.templates", "resources", N_("resource templates are RFC 6570 URI templates"),
          _rule(_R, "schema#resourcetemplate", "MUST (schema)",
                "uriTemplate: string: A URI template (according to RFC 6570) that can be used "
                "to construct resource URIs. @format uri-template",
                "The schema's type and format, no sentence with a keyword."),
          N_("Write uriTemplate in RFC 6570 syntax: literals and {expressions} such as "
          "file:///{path} or {+base}{?q,page}.")),
    Check("resources.subscribe", "resources",
          N_("resources.subscribe declared ⇒ subscribe and unsubscribe work"),
          _rule(_R, "schema#servercapabilities", "inferred",
                "resources: { subscribe?: boolean (Whether this server supports subscribing "
                "to resource updates.) }",
                "No sentence obliges a server that declares subscribe to accept "
                "resources/subscribe; clients rely on what was negotiated, so a refusal warns."),
          N_("Serve resources/subscribe and resources/unsubscribe (an empty result) when you "
          "declare resources.subscribe; leave it out otherwise.")),
    Check("prompts.arguments", "prompts", N_("prompt arguments well-formed"),
          _rule(_R, "schema#promptargument", "MUST (schema)",
                "PromptArgument extends BaseMetadata: name: string; description?: string; "
                "required?: boolean (Whether this argument must be provided.)",
                "The schema's types, no sentence with a keyword."),
          N_("List each prompt's arguments as objects with a string name and, if given, a "
          "boolean required.")),
    Check("prompts.get", "prompts", N_("prompts/get answers messages with valid roles and content"),
          _rule(_R, "schema#promptmessage", "MUST (schema)",
                "PromptMessage: role: Role; content: ContentBlock. Role = \"user\" | "
                "\"assistant\".",
                "The schema's types (server/prompts: role is either \"user\" or "
                "\"assistant\"), no sentence with a keyword."),
          N_("Answer prompts/get with messages [{role: \"user\" or \"assistant\", content: a "
          "text, image, audio, resource_link or resource block}].")),
    Check("completion.result", "completion", N_("completion/complete answers the result's shape"),
          _rule(_R, "schema#completeresult", "MUST (schema)",
                "CompleteResult: completion: { values: string[] (An array of completion "
                "values. Must not exceed 100 items.); total?: number; hasMore?: boolean }",
                "The schema's types; its \"Must\" is not an RFC 2119 keyword."),
          N_("Answer completion/complete with completion {values: at most 100 strings, total: a "
          "number, hasMore: a boolean}.")),
    Check("logging.invalid-level", "logging",
          N_("logging/setLevel refuses an invalid level (-32602)"),
          _rule(_R, "server/utilities/logging#error-handling", "SHOULD",
                "Servers SHOULD return standard JSON-RPC errors for common failure cases: "
                "Invalid log level: -32602 (Invalid params)"),
          N_("Answer logging/setLevel with a level outside the eight RFC 5424 names with error "
          "-32602.")),
    Check("jsonrpc.ids", "jsonrpc", N_("responses echo request ids, one response per request"),
          _rule(_R, "basic#result-responses", "MUST",
                "Result responses MUST include the same ID as the request they correspond "
                "to."),
          N_("Answer each request exactly once, with its id.")),
    Check("jsonrpc.error-codes", "jsonrpc",
          N_("error codes are integers outside JSON-RPC's reserved gaps"),
          _rule(_R, "basic#error-responses", "MUST",
                "Error codes MUST be integers.",
                "JSON-RPC 2.0, which MCP messages follow, reserves -32768 to -32000 for its "
                "predefined errors and -32099 to -32000 for implementation-defined server "
                "errors."),
          N_("Use integer codes: JSON-RPC's predefined ones, -32099..-32000, or outside "
          "-32768..-32000.")),
    Check("jsonrpc.messages", "jsonrpc", N_("everything received is a valid JSON-RPC message"),
          _rule(_R, "basic/transports#stdio", "MUST",
                "The server MUST NOT write anything to its stdout that is not a valid MCP "
                "message."),
          N_("Send logs to stderr (or notifications/message), never to stdout.")),
    Check("jsonrpc.batch", "jsonrpc",
          N_("a batch is not answered with a batch (stdio, 2025-06-18+)"),
          _rule(_R, "basic/transports#stdio", "MUST",
                "Messages are individual JSON-RPC requests, notifications, or responses. … The "
                "server MUST NOT write anything to its stdout that is not a valid MCP message.",
                "2025-06-18 changelog: Remove support for JSON-RPC batching."),
          N_("Treat a JSON array as an invalid message (answer -32600, or nothing); never write "
          "an array of responses.")),
    Check("stateless.unsupported-version", "stateless",
          N_("an unsupported version gets -32022 with the supported list"),
          _rule("2026-07-28", "basic/versioning#protocol-version-negotiation", "MUST",
                "If the server does not implement the requested version (whether the version "
                "is unknown to the server, or is a known version the server has chosen not to "
                "support), it MUST respond with an UnsupportedProtocolVersionError listing the "
                "versions it does support."),
          N_("Answer a request whose _meta names a version you do not serve with error -32022 "
          "and data.supported: the versions you serve.")),
    Check("stateless.result-type", "stateless", N_("every result carries resultType"),
          _rule("2026-07-28", "basic#result-responses", "MUST",
                "The result MUST include a resultType field to indicate the type of the "
                "result."),
          N_("Put resultType (\"complete\", or \"input_required\") in every result.")),
    Check("http.origin", "http", N_("a foreign Origin is refused with 403"),
          _rule(_R, "basic/transports#security-warning", "MUST",
                "Servers MUST validate the Origin header on all incoming connections to "
                "prevent DNS rebinding attacks. If the Origin header is present and invalid, "
                "servers MUST respond with HTTP 403 Forbidden."),
          N_("Answer 403 to requests whose Origin is not one you serve (e.g. only localhost "
          "origins for a local server).")),
    Check("http.protocol-version-header", "http",
          N_("an unsupported MCP-Protocol-Version gets 400"),
          _rule(_R, "basic/transports#protocol-version-header", "MUST",
                "If the server receives a request with an invalid or unsupported "
                "MCP-Protocol-Version, it MUST respond with 400 Bad Request."),
          N_("Check the MCP-Protocol-Version header and answer 400 to versions you do not speak.")),
    Check("http.session-404", "http", N_("a terminated session's id gets 404"),
          _rule(_R, "basic/transports#session-management", "MUST",
                "The server MAY terminate the session at any time, after which it MUST "
                "respond to requests containing that session ID with HTTP 404 Not Found."),
          N_("After DELETE (or expiry) answer 404 to every request carrying that session id.")),
    Check("http.session-id", "http", N_("session id is visible ASCII"),
          _rule(_R, "basic/transports#session-management", "MUST",
                "The session ID MUST only contain visible ASCII characters (ranging from 0x21 "
                "to 0x7E)."),
          N_("Issue session ids made of visible ASCII only (a UUID or a base64url token).")),
    # -- Streamable HTTP, stateless-era HTTP, authorization, MCP Apps (mcp_nb.check.http_rules,
    #    auth_rules, apps_rules) ----------------------------------------------------------
    Check("http.notification-202", "http", N_("a notification POSTed is answered 202, no body"),
          _rule(_R, "basic/transports#sending-messages-to-the-server", "MUST",
                "If the input is a JSON-RPC response or notification: If the server accepts "
                "the input, the server MUST return HTTP status code 202 Accepted with no body."),
          N_("Answer a POSTed notification (or response) with 202 and an empty body.")),
    Check("http.request-answer", "http",
          N_("a request is answered as JSON or as an SSE stream (Accept probed)"),
          _rule(_R, "basic/transports#sending-messages-to-the-server", "MUST",
                "If the input is a JSON-RPC request, the server MUST either return "
                "Content-Type: text/event-stream, to initiate an SSE stream, or Content-Type: "
                "application/json, to return one JSON object."),
          N_("Answer each POSTed request with Content-Type application/json or "
          "text/event-stream (or an HTTP error status).")),
    Check("http.session-id-unguessable", "http", N_("session ids unguessable"),
          _rule(_R, "basic/transports#session-management", "SHOULD",
                "The session ID SHOULD be globally unique and cryptographically secure (e.g., "
                "a securely generated UUID, a JWT, or a cryptographic hash)."),
          N_("Mint session ids from a CSPRNG (e.g. secrets.token_urlsafe(32) or uuid4), never "
          "from a counter or a clock.")),
    Check("http.event-ids", "http", N_("SSE event ids unique across the session's streams"),
          _rule(_R, "basic/transports#resumability-and-redelivery", "MUST",
                "If present, the ID MUST be globally unique across all streams within that "
                "session—or all streams with that specific client, if session management is "
                "not in use."),
          N_("Make event ids unique per session, e.g. '<stream>-<position>'.")),
    Check("http.resumption", "http", N_("Last-Event-ID replays only its own stream"),
          _rule(_R, "basic/transports#resumability-and-redelivery", "MUST",
                "The server MAY use this header to replay messages that would have been sent "
                "after the last event ID, on the stream that was disconnected, and to resume "
                "the stream from that point. The server MUST NOT replay messages that would "
                "have been delivered on a different stream."),
          N_("On GET with Last-Event-ID, replay only the stream that event id belongs to.")),
    Check("stateless.discover", "stateless",
          N_("server/discover answered, with its caching hints"),
          _rule("2026-07-28", "server/discover", "MUST",
                "Servers MUST implement it. (server/utilities/caching: Servers MUST include "
                "caching hints on results with resultType: \"complete\" returned by the "
                "following operations: server/discover … Servers MUST provide a ttlMs value "
                "that is >= 0.)"),
          N_("Answer server/discover with a result carrying ttlMs (a number >= 0) and "
          "cacheScope.")),
    Check("stateless.discover-result", "stateless",
          N_("server/discover's result typed as the schema says"),
          _rule("2026-07-28", "schema#discoverresult", "MUST (schema)",
                "DiscoverResult extends CacheableResult: supportedVersions: string[]; "
                "capabilities: ServerCapabilities; cacheScope: \"public\" | \"private\".",
                "The schema's types, no sentence with a keyword (\"A discovery result "
                "includes: supportedVersions … capabilities …\"): a result the client could "
                "still use warns; the caching hints' presence is stateless.discover's MUST."),
          N_("Answer server/discover with supportedVersions a list of version strings, "
          "capabilities an object and cacheScope \"public\" or \"private\".")),
    Check("stateless.discover-server-info", "stateless", N_("server/discover names the server"),
          _rule("2026-07-28", "server/discover#discoverresult", "SHOULD",
                "_meta['io.modelcontextprotocol/serverInfo']: Name and version of the server "
                "software. Servers SHOULD include this field."),
          N_("Put io.modelcontextprotocol/serverInfo {name, version} in server/discover's "
          "_meta.")),
    Check("stateless.request-meta", "stateless",
          N_("a request without its required _meta fields gets -32602 (HTTP 400)"),
          _rule("2026-07-28", "basic#meta", "MUST",
                "A request missing any required field is malformed; the server MUST reject it "
                "with JSON-RPC error code -32602 (Invalid params). On HTTP, the response "
                "status MUST be 400 Bad Request."),
          N_("Refuse a request whose _meta lacks io.modelcontextprotocol/protocolVersion or "
          "clientCapabilities with -32602 (and HTTP 400).")),
    Check("stateless.header-mismatch", "stateless",
          N_("Mcp-Method, Mcp-Name or MCP-Protocol-Version missing or disagreeing with the "
          "body: 400 -32020"),
          _rule("2026-07-28", "basic/transports/streamable-http#server-validation", "MUST",
                "Servers that process the request body MUST reject requests where the values "
                "specified in the headers do not match the corresponding values in the "
                "request body. … When rejecting a request due to header validation failure, "
                "servers MUST return HTTP status 400 Bad Request and MUST include a JSON-RPC "
                "error response using the following error code: -32020 (HeaderMismatch). "
                "(basic/versioning: \"A dual-era server selects its behavior from how the "
                "client opens: A request carrying modern per-request _meta is served "
                "statelessly according to this revision.\")"),
          N_("Compare MCP-Protocol-Version, Mcp-Method and Mcp-Name with the body and answer "
          "400 with error -32020 when one is missing or differs, also when the header names "
          "a handshake-era version: the body's _meta decides the era.")),
    Check("stateless.x-mcp-header", "stateless", N_("x-mcp-header annotations valid"),
          _rule("2026-07-28", "basic/transports/streamable-http#schema-extension", "MUST",
                "Constraints on x-mcp-header values: MUST NOT be empty; MUST match HTTP "
                "field-name token syntax (1*tchar, RFC 9110 Section 5.1); MUST NOT contain "
                "control characters …; MUST be case-insensitively unique among all "
                "x-mcp-header values in the inputSchema; MUST only be applied to parameters "
                "with primitive types (integer, string, boolean). Parameters with type number "
                "are not permitted. … MUST only be applied to properties that are statically "
                "reachable from the schema root"),
          N_("Put x-mcp-header only on string/integer/boolean properties reached through "
          "properties alone, with unique token names.")),
    Check("auth.discovery", "auth", N_("the 401 leads to the resource metadata"),
          _rule(_R, "basic/authorization#protocol-requirements", "SHOULD",
                "Authorization is OPTIONAL for MCP implementations. When supported: "
                "Implementations using an HTTP-based transport SHOULD conform to this "
                "specification. … (Protected Resource Metadata Discovery Requirements: MCP "
                "servers MUST implement one of the following discovery mechanisms … "
                "WWW-Authenticate Header … Well-Known URI.)",
                "The discovery MUST binds a server that follows this specification, and "
                "following it is a SHOULD (2026-07-28 says the same): a server that asks for "
                "another credential (an API key) or keeps the 2025-03-26 layout only warns. "
                "Once it serves Protected Resource Metadata, what the document holds is "
                "auth.resource-metadata's MUST."),
          N_("Answer 401 with WWW-Authenticate: Bearer resource_metadata=\"URL\", or serve "
          "the metadata at /.well-known/oauth-protected-resource[/path].")),
    Check("auth.resource-metadata", "auth",
          N_("Protected Resource Metadata valid, its resource this server"),
          _rule(_R, "basic/authorization#authorization-server-location", "MUST",
                "The Protected Resource Metadata document returned by the MCP server MUST "
                "include the authorization_servers field containing at least one "
                "authorization server. (RFC 9728 §3.3: the resource value MUST be identical "
                "to the protected resource's resource identifier.)"),
          N_("Serve a JSON object whose resource is this server's URL and whose "
          "authorization_servers lists at least one issuer.")),
    Check("auth.server-metadata", "auth", N_("authorization server metadata valid, issuer exact"),
          _rule(_R, "basic/authorization#overview", "MUST",
                "MCP authorization servers MUST provide at least one of the following "
                "discovery mechanisms: OAuth 2.0 Authorization Server Metadata (RFC8414); "
                "OpenID Connect Discovery 1.0. (RFC 8414 §3.3: the issuer value returned MUST "
                "be identical to the authorization server's issuer identifier.)"),
          N_("Serve RFC 8414 metadata at the issuer's well-known URI, with issuer exactly the "
          "issuer named in authorization_servers.")),
    Check("auth.pkce-s256", "auth", N_("PKCE S256 advertised"),
          _rule(_R, "basic/authorization#authorization-code-protection", "inferred",
                "MCP clients MUST use the S256 code challenge method when technically capable "
                "… If code_challenge_methods_supported is absent, the authorization server "
                "does not support PKCE and MCP clients MUST refuse to proceed.",
                "These MUSTs are the client's; the authorization server's own (for OpenID "
                "Connect Discovery: include code_challenge_methods_supported) does not name "
                "S256, so a server a conforming client must refuse only warns."),
          N_("List \"S256\" in code_challenge_methods_supported.")),
    Check("auth.client-registration", "auth", N_("Client ID Metadata Documents or DCR offered"),
          _rule(_R, "basic/authorization#overview", "SHOULD",
                "Authorization servers and MCP clients SHOULD support OAuth Client ID Metadata "
                "Documents … Authorization servers and MCP clients MAY support the OAuth 2.0 "
                "Dynamic Client Registration Protocol (RFC7591)."),
          N_("Advertise client_id_metadata_document_supported: true (or a "
          "registration_endpoint), so clients need no pre-registration.")),
    Check("apps.resource", "apps", N_("App UI resources exist and read as ui:// HTML"),
          SpecRule(APPS_REVISION, "content-requirements", "MUST",
                   "Resource MUST exist on the server … URI MUST start with ui:// scheme … "
                   "Content MUST be provided via either text (string) or blob "
                   "(base64-encoded)", APPS_SPEC),
          N_("Serve every ui:// resource your tools name (_meta.ui.resourceUri) from "
          "resources/read, with the HTML as text or base64 blob.")),
    Check("apps.mime-type", "apps", N_("App UI resources read as text/html;profile=mcp-app"),
          SpecRule(APPS_REVISION, "content-requirements", "MUST",
                   "mimeType MUST be text/html;profile=mcp-app (other types reserved for future "
                   "extensions)", APPS_SPEC),
          N_("Give the resources/read content of a UI resource the mimeType "
          "text/html;profile=mcp-app.")),
    Check("apps.csp", "apps", N_("declared CSP domains are lists of origins"),
          SpecRule(APPS_REVISION, "ui-resource-format", "MUST (schema)",
                   "McpUiResourceCsp: connectDomains?: string[]; resourceDomains?: string[]; "
                   "frameDomains?: string[]; baseUriDomains?: string[] (origins, wildcard "
                   "subdomains supported).", APPS_SPEC,
                   note="The interface's types; the MUSTs about CSP are the host's (it MUST "
                   "NOT allow undeclared domains), so a value that is not an origin, which "
                   "the host drops, only warns."),
          N_("Declare _meta.ui.csp domains as lists of origins such as "
          "\"https://api.example.com\" or \"https://*.example.com\".")),
)

#: Every check, by id, in report order.
CHECKS: dict[str, Check] = {check.id: check for check in _CHECK_LIST}
