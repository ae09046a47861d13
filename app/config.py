"""Orion's configuration: every environment variable (and `.env`), read and validated in one place;
secrets are `SecretStr`, and a bad variable is named, its value never echoed."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.agent.thinking import (
    ANSWER_THINKING,
    SUMMARY_THINKING,
    THINKING_OFF_EFFORTS,
    Effort,
    ThinkingMode,
)
from app.learning.channel_mode import ChannelMode
from app.storage.team_scope import is_slack_team_id

# A current, non-deprecated model from the SDK's model list (anthropic.types.ModelParam).
DEFAULT_MODEL = "claude-sonnet-5-5"
# Small and fast: summaries are best-effort work done after the reply.
DEFAULT_SUMMARY_MODEL = "claude-haiku-5-5"


class RunMode(StrEnum):
    HTTP = "http"
    SOCKET = "socket"


class SlackExperience(StrEnum):
    """Which of Slack's AI app experiences the Slack app was created with (its manifest)."""

    # assistant_view: the side pane; a thread opens with `assistant_thread_started`.
    ASSISTANT = "assistant"
    # agent_view: the app's Messages tab; every top-level DM starts a conversation. The only
    # experience Slack offers new apps.
    AGENT = "agent"


def _starting(prefix: str, what: str) -> AfterValidator:
    def check(value: SecretStr) -> SecretStr:
        if not value.get_secret_value().startswith(prefix):
            raise ValueError(f"must be {what} starting with {prefix}")
        return value

    return AfterValidator(check)


# SLACK_BOT_TOKEN: required to serve one workspace, optional for the operator commands,
# absent in distribution mode (each workspace's token comes from its installation).
BotToken = Annotated[SecretStr, _starting("xoxb-", "a bot token")]
AppToken = Annotated[SecretStr, _starting("xapp-", "an app-level token")]


def _web_address(value: str) -> str:
    # `localhost:8765` would pass start-up and then read as an outage ("try again") on
    # every request; the address itself is not echoed (a proxy's may hold a password).
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("must be a web address starting with http:// or https://")
    return value


WebAddress = Annotated[str, AfterValidator(_web_address)]

# The bot scopes an installation asks for when SLACK_SCOPES is unset: manifest.yaml's
# (tests/test_manifest.py holds the two together).
DEFAULT_BOT_SCOPES = (
    *("assistant:write", "chat:write", "im:history", "files:write", "im:write"),
    # Channels (docs/slack-setup.md): mentions, the thread read back, the channel's
    # privacy and members, admins, the channel memory command.
    *("app_mentions:read", "channels:history", "groups:history", "channels:read"),
    *("groups:read", "users:read", "commands"),
)
DEFAULT_AUTHORIZE_URL = "https://slack.com/oauth/v2/authorize"

# The example values of .env.example ("xoxb-your-bot-token", "pk-lf-your-public-key"): a
# copied file with a value not yet filled in must not pass for configured.
_EXAMPLE_VALUE = re.compile(r"^(?:[a-z]+-){0,2}your-", re.IGNORECASE)
_STILL_THE_EXAMPLE = "still the example value from .env.example, not a real one"


_CONTROL_CHARACTER = re.compile(r"[\x00-\x1f\x7f]")
_CARRIAGE_RETURN = (
    "ends in a carriage return, as a line of a file with Windows line endings does when "
    "the shell reads it: set it without (Orion reads .env itself, any line endings)"
)
_CONTROL_IN_VALUE = "holds a control character (a tab or a line break): remove it"


class _FromEnvironment(BaseSettings):
    # An empty value (`ANTHROPIC_API_KEY=`, in the environment or .env) is no value: a
    # required variable left empty is reported missing, an optional one takes its default,
    # rather than an empty key or secret passing for configured.
    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", env_ignore_empty=True
    )

    @field_validator("*", mode="before")
    @classmethod
    def _not_blank(cls, value: object) -> object:
        # `KEY=   ` is no more a value than `KEY=`, but is not ignored as empty: a key of
        # spaces would otherwise pass start-up and fail every request.
        if isinstance(value, str) and value and not value.strip():
            raise ValueError("only whitespace, not a value")
        # `source .env` from a file with Windows line endings leaves a `\r` on every value:
        # a key with it fails every request as a connection error ("try again").
        if isinstance(value, str) and _CONTROL_CHARACTER.search(value):
            raise ValueError(_CARRIAGE_RETURN if value.endswith("\r") else _CONTROL_IN_VALUE)
        return value

    @field_validator("*", mode="after")
    @classmethod
    def _not_the_example_value(cls, value: object) -> object:
        text = value.get_secret_value() if isinstance(value, SecretStr) else value
        if isinstance(text, str) and _EXAMPLE_VALUE.match(text):
            raise ValueError(_STILL_THE_EXAMPLE)
        return value

    def secret_values(self) -> list[str]:
        """Every secret's plain value (each `SecretStr` setting), so log and trace
        redaction can scrub them."""
        values = [getattr(self, name) for name in type(self).model_fields]
        return [
            v.get_secret_value()
            for v in values
            if isinstance(v, SecretStr) and v.get_secret_value()
        ]


# Cloud Storage's bucket names (dotted names may be longer, up to 222 characters).
_BUCKET_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]")


class StorageSettings(_FromEnvironment):
    """Where memories and Orion's own records live, and how long conversations are kept.
    (`STORAGE_EMULATOR_HOST` is read by google-cloud-storage itself.)"""

    @property
    def keys_per_team(self) -> bool:
        """Whether every key of a person's content (and of Orion's records) is scoped by
        Slack team: in distribution mode (see `OperatorSettings.distribution`)."""
        return False

    gcs_memories_bucket: str | None = None
    memory_dir: Path = Path(".orion/memories")
    memory_enabled: bool = True
    # Conversations older than this are not brought up, then deleted (app/memory/retention.py);
    # in GCS by the lifecycle rule, whose age (gcs-lifecycle.json) must match.
    memory_session_retention_days: int = Field(default=30, ge=1, le=3650)
    # The most the organisation's shared context (app/memory/shared_context.py) may lag an
    # operator's edit.
    memory_global_context_max_age_s: float = Field(default=10.0, ge=0, le=3600)

    @field_validator("memory_dir")
    @classmethod
    def _home_expanded(cls, value: Path) -> Path:
        # `MEMORY_DIR=~/orion` in .env reaches Orion unexpanded (no shell reads .env): it
        # would be a folder named `~` in the working directory.
        return value.expanduser()

    @field_validator("gcs_memories_bucket")
    @classmethod
    def _bucket_name(cls, value: str | None) -> str | None:
        """The bucket's name; a `gs://` prefix (as the console and gcloud show it) is
        accepted and dropped, a folder inside a bucket refused."""
        if value is None:
            return None
        name = value.strip().removeprefix("gs://").rstrip("/")
        if "/" in name:
            raise ValueError(
                "names a folder inside a bucket: give the bucket alone (Orion keeps its "
                "own folders in it)"
            )
        if not _BUCKET_NAME.fullmatch(name):
            raise ValueError(
                "not a Cloud Storage bucket name (3 to 63 lowercase letters, digits, "
                "dashes, underscores and dots, starting and ending with a letter or digit)"
            )
        return name

    def store_location(self) -> str:
        """The store as an operator must see it: the bucket, or the memory directory as an
        absolute path (a relative MEMORY_DIR depends on where the command runs)."""
        if self.gcs_memories_bucket:
            return f"gs://{self.gcs_memories_bucket}"
        return str(self.memory_dir.resolve())


class ObservabilitySettings(_FromEnvironment):
    langfuse_public_key: SecretStr | None = None
    langfuse_secret_key: SecretStr | None = None
    langfuse_base_url: WebAddress | None = None

    google_cloud_project: str | None = None
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_format: Literal["auto", "json", "console"] = "auto"

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper_level(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value

    @property
    def tracing_enabled(self) -> bool:
        return self.langfuse_public_key is not None and self.langfuse_secret_key is not None

    def tracing_problems(self) -> list[str]:
        """Half of Langfuse's keys would trace nothing, and say nothing of it."""
        if (self.langfuse_public_key is None) != (self.langfuse_secret_key is None):
            return ["LANGFUSE_PUBLIC_KEY / LANGFUSE_SECRET_KEY: set both or neither"]
        return []


class OperatorSettings(StorageSettings, ObservabilitySettings):
    """What `orion memory` reads (app/memory_commands.py): the store, logs, and Slack only
    when a bot token is there to look up a person's DM. Never the Anthropic key or the
    signing secret: an operator erasing someone needs only the storage settings."""

    # Required to serve one workspace (`Settings.problems_for`); absent in distribution mode.
    slack_bot_token: BotToken | None = None
    slack_api_url: WebAddress = "https://slack.com/api/"
    # Public (it is in every install link); with no bot token it means distribution mode.
    slack_client_id: str | None = None

    @property
    def distribution(self) -> bool:
        """One deployment serving many workspaces (docs/distribution.md): an OAuth app
        (SLACK_CLIENT_ID) and no single workspace's bot token."""
        return self.slack_client_id is not None and self.slack_bot_token is None

    @property
    def keys_per_team(self) -> bool:
        return self.distribution


class Settings(OperatorSettings):
    """Everything Orion reads to serve."""

    slack_signing_secret: SecretStr | None = None
    # Distribution mode (OAuth installs): SLACK_CLIENT_ID (above) and this.
    slack_client_secret: SecretStr | None = None
    # Comma-separated bot scopes an installation asks for (default DEFAULT_BOT_SCOPES).
    slack_scopes: str | None = None
    # The Redirect URL registered with the app, e.g. https://HOST/slack/oauth_redirect;
    # needed when the app lists several (Slack then requires it in the exchange too).
    slack_oauth_redirect_url: WebAddress | None = None
    slack_authorize_url: WebAddress = DEFAULT_AUTHORIZE_URL
    # Distribution mode: the only workspaces (team ids, or organisation ids for Enterprise
    # Grid) that may install Orion and be answered, comma-separated; unset: any.
    slack_allowed_teams: str | None = None
    slack_app_token: AppToken | None = None
    # Existing installs (assistant_view) keep working unchanged; new apps set `agent`.
    slack_experience: SlackExperience = SlackExperience.ASSISTANT
    # The most Orion does when mentioned in a channel: `memory`, `answers` (keeps nothing) or
    # `off`; admins choose within it (docs/channels.md, "Admins choose").
    slack_channels: ChannelMode = ChannelMode.MEMORY

    anthropic_api_key: SecretStr
    anthropic_base_url: WebAddress | None = None
    anthropic_model: str = DEFAULT_MODEL
    # How the answer's model thinks (app/agent/thinking.py, docs/claude-settings.md):
    # `between_tools` (no up-front thinking, progress notes shown between tool calls),
    # `adaptive` (thinks first; never shown) or `disabled` (models that accept it).
    anthropic_thinking: ThinkingMode = ANSWER_THINKING.mode
    anthropic_effort: Effort = ANSWER_THINKING.effort
    anthropic_max_retries: int = Field(default=2, ge=0, le=10)
    anthropic_timeout_s: float = Field(default=120.0, gt=0)
    summary_model: str = DEFAULT_SUMMARY_MODEL
    summary_thinking: ThinkingMode = SUMMARY_THINKING.mode
    summary_effort: Effort = SUMMARY_THINKING.effort
    summary_timeout_s: float = Field(default=10.0, gt=0, le=60)

    memory_load_timeout_s: float = Field(default=2.0, gt=0, le=30)
    memory_context_token_budget: int = Field(default=2000, ge=100, le=50_000)
    # The whole after-turn step (session summary and index); it runs after the reply.
    memory_after_turn_timeout_s: float = Field(default=20.0, gt=0, le=120)
    # Whether an answer that changed memory carries a note of what changed, with an Undo
    # (`on`/`off`); each person can change it on their Home tab.
    memory_notes: bool = True

    port: int = Field(default=8080, ge=1, le=65535)

    @field_validator("anthropic_effort", "summary_effort")
    @classmethod
    def _effort_allowed_with_thinking(cls, value: Effort, info: ValidationInfo) -> Effort:
        """The API refuses xhigh and max effort with thinking off (a 400 on every answer)."""
        name = "ANTHROPIC_THINKING" if info.field_name == "anthropic_effort" else "SUMMARY_THINKING"
        mode = info.data.get(name.lower())
        if mode in ("between_tools", "disabled") and value not in THINKING_OFF_EFFORTS:
            raise ValueError(
                f"{value} needs {name}=adaptive (with {mode} the API takes low, medium or high)"
            )
        return value

    @field_validator("slack_allowed_teams")
    @classmethod
    def _team_ids(cls, value: str | None) -> str | None:
        if value is None:
            return None
        ids = [part.strip() for part in value.split(",") if part.strip()]
        if not ids:
            raise ValueError("names no workspace: leave it unset to allow every workspace")
        for team_id in ids:
            if not is_slack_team_id(team_id):
                raise ValueError(
                    f"{team_id[:40]!r} is not a Slack team id (T…) or organisation id (E…)"
                )
        return ",".join(ids)

    @property
    def allowed_teams(self) -> frozenset[str] | None:
        """The workspaces distribution mode serves (None: every one)."""
        if self.slack_allowed_teams is None:
            return None
        return frozenset(self.slack_allowed_teams.split(","))

    @property
    def bot_scopes(self) -> list[str]:
        if self.slack_scopes is None:
            return list(DEFAULT_BOT_SCOPES)
        return [scope.strip() for scope in self.slack_scopes.split(",") if scope.strip()]

    def default_mode(self) -> RunMode:
        return RunMode.SOCKET if self.slack_app_token is not None else RunMode.HTTP

    def problems_for(self, mode: RunMode) -> list[str]:
        """Cross-field rules that depend on how Orion runs."""
        problems = self._slack_app_problems(mode)
        if mode is RunMode.HTTP and self.slack_signing_secret is None:
            problems.append("SLACK_SIGNING_SECRET: missing (required in HTTP mode)")
        if mode is RunMode.SOCKET and self.slack_app_token is None:
            problems.append("SLACK_APP_TOKEN: missing (required in Socket Mode)")
        return problems + self.tracing_problems()

    def _slack_app_problems(self, mode: RunMode) -> list[str]:
        """One workspace (a bot token) or many (an OAuth app), never half of either."""
        if self.slack_bot_token is not None:
            return []
        if self.slack_client_id is None and self.slack_client_secret is None:
            return ["SLACK_BOT_TOKEN: missing (required)"]
        problems = []
        if self.slack_client_id is None:
            problems.append("SLACK_CLIENT_ID: missing (required with SLACK_CLIENT_SECRET)")
        if self.slack_client_secret is None:
            problems.append("SLACK_CLIENT_SECRET: missing (required with SLACK_CLIENT_ID)")
        if mode is RunMode.SOCKET:
            problems.append(
                "SLACK_APP_TOKEN: Socket Mode serves one workspace; distribution mode "
                "(SLACK_CLIENT_ID without SLACK_BOT_TOKEN) runs over HTTP only"
            )
        if not self.bot_scopes:
            problems.append("SLACK_SCOPES: names no scope")
        return problems


ENV_HINT = "see .env.example"
# How a command ends after a problem report: something to fix before it can do its job
# (what argparse uses for bad usage too).
EXIT_PROBLEM = 2
# A dependency Orion needs before it serves (Slack) did not answer: try again later.
EXIT_UNAVAILABLE = 69  # sysexits.h EX_UNAVAILABLE


def problem_report(who: str, problems: Sequence[str], *, hint: str | None = ENV_HINT) -> str:
    """The one shape of every error a person must act on: `{who} — NAME: what is wrong; {hint}`,
    several one per line under `{who}; fix these ({hint}):`."""
    if len(problems) == 1:
        return f"{who} — {problems[0]}" + (f"; {hint}" if hint else "")
    lines = "\n".join(f"  - {problem}" for problem in problems)
    return f"{who}; fix these" + (f" ({hint})" if hint else "") + f":\n{lines}"


def report_problem(who: str, problem: str, code: int, *, hint: str | None = None) -> int:
    """Print one problem report (stderr) for a person to act on; `code`, to exit with."""
    print(problem_report(who, [problem], hint=hint), file=sys.stderr)
    return code


# How much of a value a person gave a problem report quotes: enough to recognise it.
QUOTED_CHARS = 40


def refused_setting(exc: BaseException, settings: Settings) -> str | None:
    """The setting to fix when Claude refused what every turn sends — the key (401, or 403
    for a key without access) or the model (404) — in problem_report's shape; else None."""
    import anthropic

    if not isinstance(exc, anthropic.APIStatusError):
        return None
    refused = f"{exc.status_code} {exc.type or 'error'}"
    if isinstance(exc, anthropic.NotFoundError):
        # The Messages API's 404: no model of that id for this key (its message "model: …",
        # or "Not found"), or an address that is not the API's (one ending in /v1: the SDK
        # adds its own).
        model = settings.anthropic_model
        problem = f"ANTHROPIC_MODEL: Claude has no model {quoted(model)} ({refused}); "
        problem += "set a current model's id"
        if model != DEFAULT_MODEL:
            problem += f", or unset it for the default ({DEFAULT_MODEL})"
        if settings.anthropic_base_url and not _names_the_model(exc.body):
            # A 404 naming no model: the address is the likelier mistake.
            return (
                f"ANTHROPIC_BASE_URL: {quoted(settings.anthropic_base_url)} answered {refused} "
                f"naming no model: give Claude's API without /v1, or unset it; or {problem}"
            )
        return problem
    if isinstance(exc, anthropic.AuthenticationError | anthropic.PermissionDeniedError):
        return (
            f"ANTHROPIC_API_KEY: Claude refused it ({refused}); create a key at "
            "console.anthropic.com and set it"
        )
    return None


def _names_the_model(body: object) -> bool:
    error = body.get("error") if isinstance(body, dict) else None
    return isinstance(error, dict) and str(error.get("message", "")).startswith("model:")


def quoted(value: str) -> str:
    """A value a person gave (a bad id, say), as a problem report shows it: in quotes, cut
    to QUOTED_CHARS (a pasted 3,000-character id is not printed back in full)."""
    if len(value) <= QUOTED_CHARS:
        return repr(value)
    return f"{value[:QUOTED_CHARS]!r}… ({len(value):,} characters)"


class ConfigError(Exception):
    """Configuration is unusable; `problems` names every bad variable (never its value).
    `advice`, when given, follows the list: what else the person may want to do."""

    def __init__(self, problems: Sequence[str], *, advice: str | None = None) -> None:
        self.problems = list(problems)
        self.advice = advice
        super().__init__(self.report("Orion cannot start"))

    def report(self, who: str) -> str:
        report = problem_report(who, self.problems)
        return f"{report}\n\n{self.advice}" if self.advice else report


# The Slack settings a first run is most likely without, and where a person with a Slack
# app finds each (docs/slack-setup.md).
_SLACK_TOKENS = {
    "SLACK_BOT_TOKEN": "copy the app's Bot User OAuth Token (xoxb-…) from its OAuth & "
    "Permissions page, with the app installed",
    "SLACK_SIGNING_SECRET": "copy the app's Signing Secret from its Basic Information page, "
    "or use Socket Mode (SLACK_APP_TOKEN), which needs none",
    "SLACK_APP_TOKEN": "create an app-level token (xapp-…) with connections:write on the "
    "app's Basic Information page",
}
# After the problems, when a Slack token is among them: the way in without a Slack app,
# and which token picks which mode.
NO_SLACK_APP_ADVICE = (
    "No Slack app yet? `scripts/uv run orion chat` talks to Orion in this terminal; it "
    "needs only ANTHROPIC_API_KEY.\n"
    "For Slack, SLACK_APP_TOKEN (xapp-…) selects Socket Mode, for local development: it "
    "needs\nSLACK_BOT_TOKEN and SLACK_APP_TOKEN, no SLACK_SIGNING_SECRET or public URL. "
    "Without it,\nOrion serves HTTP: SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET "
    "(docs/slack-setup.md)."
)


def _describe(error: Mapping[str, Any]) -> str:
    name = "_".join(str(part) for part in error["loc"]).upper() or "configuration"
    if error["type"] == "missing":
        return f"{name}: missing (required)"
    # pydantic's messages describe the rule, not the input, so no secret is echoed.
    message = error["msg"].removeprefix("Value error, ")
    return f"{name}: {message}"


AnySettings = TypeVar("AnySettings", bound=_FromEnvironment)


# Windows PowerShell 5's `echo KEY=value > .env` writes UTF-16; pydantic-settings reads UTF-8.
DOTENV_NOT_UTF8 = ".env: not UTF-8 text; save it as UTF-8 (Windows PowerShell's `>` writes UTF-16)"


def read_settings(cls: type[AnySettings], **overrides: Any) -> AnySettings:
    """`cls` from the environment (and `.env`), raising ConfigError with every problem."""
    try:
        return cls(**overrides)
    except ValidationError as exc:
        raise ConfigError([_describe(error) for error in exc.errors()]) from None
    except UnicodeDecodeError:
        raise ConfigError([DOTENV_NOT_UTF8]) from None


def load_settings(mode: RunMode | None = None, **overrides: object) -> Settings:
    """Read and validate settings to serve, raising ConfigError with every problem at once."""
    if mode is RunMode.SOCKET or (mode is None and _provided("SLACK_APP_TOKEN")):
        # Socket Mode verifies no signature: SLACK_SIGNING_SECRET (an example value under
        # `slack run`) must not stop it.
        overrides = {"slack_signing_secret": None, **overrides}
    try:
        settings = read_settings(Settings, **overrides)
    except ConfigError as exc:
        if DOTENV_NOT_UTF8 in exc.problems:  # what else is missing shows once it is read
            raise
        problems = exc.problems
        # The mode rules need a parsed Settings; report the ones that matter most anyway,
        # so a first run lists every missing variable at once.
        if not _provided("SLACK_BOT_TOKEN", "SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET"):
            problems.insert(0, "SLACK_BOT_TOKEN: missing (required)")
        if mode is RunMode.SOCKET and not _provided("SLACK_APP_TOKEN"):
            problems.append("SLACK_APP_TOKEN: missing (required in Socket Mode)")
        elif mode is not RunMode.SOCKET and not _provided(
            "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN"
        ):
            problems.append("SLACK_SIGNING_SECRET: missing (required in HTTP mode)")
        raise _config_error(problems) from None
    problems = settings.problems_for(mode or settings.default_mode())
    if problems:
        raise _config_error(problems)
    return settings


def _config_error(problems: list[str]) -> ConfigError:
    # Not for distribution mode, which has tokens of its own (docs/distribution.md).
    if _provided("SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET"):
        return ConfigError(problems)
    # A Slack token given (not the example value) says someone has an app: each missing
    # token's line says where in it to find that token, rather than how to do without one.
    if any(_given(name) for name in _SLACK_TOKENS):
        return ConfigError([_with_where_to_find(problem) for problem in problems])
    slack = any(problem.split(":", 1)[0] in _SLACK_TOKENS for problem in problems)
    return ConfigError(problems, advice=NO_SLACK_APP_ADVICE if slack else None)


def _with_where_to_find(problem: str) -> str:
    name = problem.split(":", 1)[0]
    unset = ": missing" in problem or _STILL_THE_EXAMPLE in problem
    return f"{problem}: {_SLACK_TOKENS[name]}" if unset and name in _SLACK_TOKENS else problem


def _provided(*names: str) -> bool:
    """Whether any of these variables is set in the environment or the `.env` file."""
    return any(_value(name) for name in names)


def _given(name: str) -> bool:
    """Whether the variable holds a value of the person's: set, and not .env.example's."""
    value = _value(name)
    return bool(value) and not _EXAMPLE_VALUE.match(value or "")


def _value(name: str) -> str | None:
    from dotenv import dotenv_values

    try:
        dotenv = dotenv_values(".env") if Path(".env").is_file() else {}
    except UnicodeDecodeError:  # read_settings names it
        dotenv = {}
    return os.environ.get(name) or dotenv.get(name)
