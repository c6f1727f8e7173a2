"""The faces other than REST: the OpenAI-compatible chat and the MCP tools.

Plain functions over the same core the REST routes call, with the same tenant isolation and
capabilities; `api/` adapts them to their wire protocols.
"""
