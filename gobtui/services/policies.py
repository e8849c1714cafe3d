"""Each session's resolved policy (config.toml layers) for the dashboard, loaded once.

The board's trigger marks, the plan preview and apply all ask here, so they agree. The file is
read again only when it changes; the CLI loads it before the app starts, so a bad file is a
one-line error at start-up, never a failure inside the dashboard.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gobtui.adapters.config.config_file import LoadedConfig, ResolvedPolicy, load_config
from gobtui.adapters.config.paths import config_path
from gobtui.adapters.config.stamp import file_stamp
from gobtui.core.model import SessionSummary, Transcript
from gobtui.core.policy import capped_to_window
from gobtui.core.strategies.common import elidable_tokens
from gobtui.services.adaptive import Adapted, RecentCompactions, adapt


@dataclass
class SessionPolicies:
    config: LoadedConfig
    _resolved: dict[tuple[str, str | None], ResolvedPolicy] = field(default_factory=dict)
    recent: RecentCompactions = field(default_factory=RecentCompactions)

    def resolve(self, summary: SessionSummary) -> ResolvedPolicy:
        # A session without a table of its own has its provider's policy: resolved once
        # (a board of 2,000 sessions asks for every row).
        own = summary.session_id in self.config.tables.sessions
        key = (summary.provider.value, summary.session_id if own else None)
        found = self._resolved.get(key)
        if found is None:
            found = self.config.resolve(summary.provider, summary.session_id, None, None)
            self._resolved[key] = found
        return found

    def adapted(self, summary: SessionSummary, transcript: Transcript | None = None) -> Adapted:
        """The policy a session is decided with: the resolved one, lowered to fire before
        the client compacts, then tuned when adaptive. The board and the watch's pre-check
        give no `transcript` (a row's items are not read: no elidable share); a plan of the
        loaded session gives it, and the tuner has its full say, as `plan` does."""
        policy = capped_to_window(
            self.resolve(summary).policy, summary.provider, summary.context_window
        )
        if transcript is None:
            context, elidable = summary.context_tokens or 0, None
        else:
            context = transcript.context_tokens()
            elidable = elidable_tokens(transcript) if policy.adaptive else None
        return adapt(
            policy,
            provider=summary.provider,
            session_id=summary.session_id,
            path=summary.path,
            window=summary.context_window,
            context_tokens=context,
            elidable_tokens=elidable,
            recent=self.recent,
        )

    def trigger(self, summary: SessionSummary) -> int:
        """The effective trigger the board marks (quota pressure applied; the tuner's when
        adaptive)."""
        policy = self.resolve(summary).policy
        if not policy.adaptive:
            return policy.effective_trigger()
        return self.adapted(summary).policy.effective_trigger()


_current: tuple[Path, tuple[int, int] | None, SessionPolicies] | None = None


def current() -> SessionPolicies:
    """The policies of the config file in effect now (ConfigError if it is broken)."""
    global _current
    path = config_path()
    stamp = file_stamp(path)
    if _current is None or _current[0] != path or _current[1] != stamp:
        _current = (path, stamp, SessionPolicies(load_config(path)))
    return _current[2]
