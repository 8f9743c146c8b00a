"""Shared fixtures for every layer's tests (tests/core, tests/net, tests/tui, tests/system).

This folder is on `sys.path` for the test modules, so they import the helper modules beside this
file by name: `net_helpers` (processes, namespaces, sync waits) and `tui_pilot` (the app's Pilot).
"""
