"""upgrade-guard: refuse Kubernetes operator upgrades that would hurt objects already stored."""
