"""Showing results: console tables, Markdown, HTML with charts."""
