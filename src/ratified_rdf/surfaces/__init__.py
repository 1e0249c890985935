"""Surfaces: how people and programs reach a brain. The `ratified` CLI, the HTTP server (SPARQL
endpoint, answer API, web page, standard surfaces), the MCP server for agents, and the link
checker; each shows the SPARQL it ran.
"""
