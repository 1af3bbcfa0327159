"""Model adapters: one translator per wire API, each over the vendor's official SDK.

Each adapter lives in its own module so importing one never imports another vendor's SDK.
The port they implement is in `thinkagent.providers.base`.
"""
