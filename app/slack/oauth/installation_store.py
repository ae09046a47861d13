"""slack_sdk's `AsyncInstallationStore` under `installations/` (docs/distribution.md): the token in
`bot.json` alone, the newest install winning, every operation bounded (`STORE_BUDGET_S`)."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from slack_sdk.oauth.installation_store import Bot, Installation
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore

from app.memory.key_prefixes import INSTALLATIONS
from app.memory.team_keys import finish_erasure_of
from app.observability.logging import get_logger
from app.storage.deadline import storage_deadline
from app.storage.store import ObjectStore, update
from app.storage.team_scope import NO_ID, InvalidTenant, Tenant

log = get_logger(__name__)

# An install or an event's authorization waits at most this long for one record (an
# install state too: app/slack/oauth/state_store.py).
STORE_BUDGET_S = 5.0
# A reinstall finishing its uninstall's erasure: a listing per kind of object, and the
# deletions of whatever a failed first pass left. The admin waits, once.
ERASURE_BUDGET_S = 20.0
INSTALLATION = "installation.json"
BOT = "bot.json"


def installation_prefix(tenant: Tenant) -> str:
    return f"{INSTALLATIONS.prefix}{tenant.enterprise_id or NO_ID}/{tenant.team_id or NO_ID}/"


def tenant_of(
    enterprise_id: str | None, team_id: str | None, is_enterprise_install: bool | None
) -> Tenant:
    """The installation's tenant: an organisation-wide one is the organisation's alone."""
    return Tenant(enterprise_id or None, None if is_enterprise_install else team_id or None)


class ObjectStoreInstallationStore(AsyncInstallationStore):
    logger = logging.getLogger(__name__)  # the interface's; Orion logs through structlog

    def __init__(self, store: ObjectStore) -> None:
        self._store = store

    async def async_save(self, installation: Installation) -> None:
        tenant = tenant_of(
            installation.enterprise_id, installation.team_id, installation.is_enterprise_install
        )
        record = _record(installation, without=_TOKEN_FIELDS)
        # A reinstall soon after an uninstall: what the uninstall's second pass would
        # delete goes now, before the new installation writes anything of its own.
        with storage_deadline(ERASURE_BUDGET_S):
            await finish_erasure_of(self._store, tenant)
        # The bot (its token) first: an installation record is never left without it.
        if installation.bot_token is not None:
            await self._save_bot(installation.to_bot(), create=True)
        await self._save_newest(installation_prefix(tenant) + INSTALLATION, record)

    async def async_save_bot(self, bot: Bot) -> None:
        """Bolt's token rotation: replaces the bot's record, never creates one — an
        uninstall that deleted it while the rotation was under way stays done."""
        await self._save_bot(bot, create=False)

    async def _save_bot(self, bot: Bot, *, create: bool) -> None:
        if bot.bot_token is None:
            return
        tenant = tenant_of(bot.enterprise_id, bot.team_id, bot.is_enterprise_install)
        await self._save_newest(installation_prefix(tenant) + BOT, _record(bot), create=create)

    async def async_find_bot(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        is_enterprise_install: bool | None = False,
    ) -> Bot | None:
        data = await self._read(enterprise_id, team_id, is_enterprise_install, BOT)
        return Bot(**data) if data is not None else None

    async def async_find_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        data = await self._read(enterprise_id, team_id, is_enterprise_install, INSTALLATION)
        if data is None:
            return None
        installation = Installation(**data)
        if user_id is not None and installation.user_id != user_id:
            return None  # Orion keeps the installer's record only; no one else's user token
        bot = await self.async_find_bot(
            enterprise_id=enterprise_id,
            team_id=team_id,
            is_enterprise_install=is_enterprise_install,
        )
        if bot is not None:
            installation.bot_token = bot.bot_token
            installation.bot_refresh_token = bot.bot_refresh_token
            installation.bot_token_expires_at = bot.bot_token_expires_at
        return installation

    async def async_delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        await self._delete(enterprise_id, team_id, BOT)

    async def async_delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        if user_id is not None:
            found = await self.async_find_installation(
                enterprise_id=enterprise_id, team_id=team_id, user_id=user_id
            )
            if found is None:
                return  # not the installer: nothing of theirs is kept
        await self._delete(enterprise_id, team_id, INSTALLATION)

    async def _save_newest(self, key: str, record: str, *, create: bool = True) -> None:
        installed_at = _installed_at(record)

        def newest(current: str | None) -> str | None:
            if current is None and not create:
                return None  # stays absent
            if current is not None and _installed_at(current) > installed_at:
                return current  # a newer install (or rotation) got there first: it stands
            return record

        with storage_deadline(STORE_BUDGET_S):
            await update(self._store, key, newest)

    async def _read(
        self,
        enterprise_id: str | None,
        team_id: str | None,
        is_enterprise_install: bool | None,
        name: str,
    ) -> dict[str, Any] | None:
        try:
            tenant = tenant_of(enterprise_id, team_id, is_enterprise_install)
        except InvalidTenant:
            log.warning("slack.installation.invalid_ids", team_id_shape=_shape(team_id))
            return None
        with storage_deadline(STORE_BUDGET_S):
            stored = await self._store.read(installation_prefix(tenant) + name)
        return json.loads(stored.content) if stored is not None else None

    async def _delete(self, enterprise_id: str | None, team_id: str | None, name: str) -> None:
        """`team_id` None: the organisation-wide installation of `enterprise_id`."""
        try:
            tenant = tenant_of(enterprise_id, team_id, team_id is None)
        except InvalidTenant:
            log.warning("slack.installation.invalid_ids", team_id_shape=_shape(team_id))
            return
        with storage_deadline(STORE_BUDGET_S):
            await self._store.delete(installation_prefix(tenant) + name)


# Kept in bot.json alone (and no user token at all: Orion asks for no user scopes).
_TOKEN_FIELDS = frozenset(
    {"bot_token", "bot_refresh_token", "bot_token_expires_at", "user_token", "user_refresh_token"}
)


def _record(model: Installation | Bot, *, without: frozenset[str] = frozenset()) -> str:
    fields = {k: v for k, v in model.to_dict_for_copying().items() if k not in without}
    return json.dumps(fields, default=_timestamp, sort_keys=True)


def _timestamp(value: object) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"cannot store {type(value).__name__}")


def _installed_at(record: str) -> datetime:
    try:
        moment = datetime.fromisoformat(json.loads(record)["installed_at"])
    except (ValueError, KeyError, TypeError):
        return datetime.min.replace(tzinfo=UTC)  # unreadable: any real install replaces it
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _shape(value: str | None) -> str:
    """How logs describe an id that was refused, without repeating what it said."""
    return "absent" if value is None else f"{len(value)} characters"
