"""The MCP server: the experiment tools and supervised-run control for MCP-capable agents.

A thin front door over the same core functions as the CLI (`autoresearch.experiments`,
`autoresearch.supervisor.lifecycle`): each tool parses its arguments, calls one core function
and renders the result. The SDK (`mcp>=2.3,<3`, the `mcp` extra) is imported only by the
modules below this package, never by the CLI at start-up.
"""
