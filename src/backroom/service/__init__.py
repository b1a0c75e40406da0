"""The one operations layer, free of any web framework: used by the HTTP API, the CLI's
local mode and `App` (and the dashboard to come).

Each operation takes the app's parts (`context.AppParts`) and, when it acts for someone,
a `callers.Caller`, and answers a `replies.Reply`: status, plain-data body, headers,
errors included as RFC 9457 problems. One module per job: `submit`, `jobs` (reads),
`cancel`, `redrive`, `api_keys` (tenants and keys), `llm` (lanes, usage), `metrics`,
`health`, `maintenance`; `documents` turns records into plain data.
"""
