"""Thin routers: parse, check the token, call the game flow, answer."""
