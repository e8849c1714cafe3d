"""Loading a session to plan, planning one strategy, evaluating them all."""
