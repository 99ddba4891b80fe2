"""Kit-format cores shared by the compiler, the scorer and the importers. Pure Python, no Django.

Each rule of the public PhysAlign kit that more than one app needs lives here exactly once.
"""
