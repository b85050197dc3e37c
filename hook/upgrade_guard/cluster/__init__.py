"""The only layer that talks to a cluster: configuration and authentication through the
kubernetes client's standard loading, responses read as raw JSON (its model classes are far
too slow for large CRDs). Everything here returns plain dicts; ClusterError is exit 3."""
