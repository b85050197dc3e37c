"""One module per command; each is a short function over the load, engine, counters and report
parts. ``options`` holds what they share: option types, policy loading, error handling."""
