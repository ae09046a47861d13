"""The installation and state stores of the OAuth flow, on both backends (the directory
and the GCS emulator): what an install leaves, and what a state is good for."""

from __future__ import annotations

import asyncio
import time

import pytest
from slack_sdk.oauth.installation_store import Installation

from app.memory.team_keys import pending_key
from app.slack.oauth.installation_store import ObjectStoreInstallationStore
from app.slack.oauth.state_store import SignedOAuthStateStore, signed_state
from app.storage.store import StoreError, StoreLayer, StoreUnavailable
from app.storage.team_scope import Tenant
from tests.backends import Backend, erase_team

TEAM = "TAAAA1"
ORG = "EORG001"


@pytest.fixture(autouse=True)
async def connected(backend: Backend) -> None:
    """Connected ahead, as Orion's start does: the stores' own short budget is for their
    requests, not for importing the GCS client on a busy machine."""
    await backend.store.connect()


def installation(
    team_id: str | None = TEAM,
    *,
    token: str = "xoxb-A-1",
    installed_at: float | None = None,
    enterprise_id: str | None = None,
    is_enterprise_install: bool = False,
    refresh_token: str | None = None,
) -> Installation:
    return Installation(
        app_id="A1",
        enterprise_id=enterprise_id,
        team_id=team_id,
        bot_token=token,
        bot_id="BBOT",
        bot_user_id="UBOT",
        bot_scopes="chat:write,im:history",
        bot_refresh_token=refresh_token,
        bot_token_expires_in=43_200 if refresh_token else None,
        user_id="UINSTALLER",
        is_enterprise_install=is_enterprise_install,
        installed_at=installed_at,
    )


async def test_an_installation_round_trips_with_its_rotation_tokens(backend: Backend) -> None:
    store = ObjectStoreInstallationStore(backend.store)
    saved = installation(refresh_token="xoxe-1-A-1")
    await store.async_save(saved)

    found = await store.async_find_installation(enterprise_id=None, team_id=TEAM)
    bot = await store.async_find_bot(enterprise_id=None, team_id=TEAM)

    assert found is not None and bot is not None
    assert (found.bot_token, found.bot_refresh_token) == ("xoxb-A-1", "xoxe-1-A-1")
    assert found.bot_token_expires_at == saved.bot_token_expires_at
    assert (bot.bot_token, bot.bot_refresh_token) == ("xoxb-A-1", "xoxe-1-A-1")
    assert bot.bot_token_expires_at == saved.bot_token_expires_at
    assert found.installed_at == saved.installed_at
    assert backend.raw_names() == [
        f"installations/-/{TEAM}/bot.json",
        f"installations/-/{TEAM}/installation.json",
    ]


async def test_an_organisation_wide_installation_is_found_for_every_workspace_of_it(
    backend: Backend,
) -> None:
    store = ObjectStoreInstallationStore(backend.store)
    await store.async_save(
        installation(None, enterprise_id=ORG, is_enterprise_install=True, token="xoxb-org")
    )

    bot = await store.async_find_bot(
        enterprise_id=ORG, team_id="TCCCC3", is_enterprise_install=True
    )
    alone = await store.async_find_bot(enterprise_id=ORG, team_id="TCCCC3")

    assert bot is not None and bot.bot_token == "xoxb-org"
    assert alone is None, "a workspace's own installation is another record"
    assert backend.raw_names() == [
        f"installations/{ORG}/-/bot.json",
        f"installations/{ORG}/-/installation.json",
    ]


async def test_no_other_installer_gets_the_installers_record(backend: Backend) -> None:
    store = ObjectStoreInstallationStore(backend.store)
    await store.async_save(installation())
    assert (
        await store.async_find_installation(enterprise_id=None, team_id=TEAM, user_id="U2") is None
    )
    found = await store.async_find_installation(
        enterprise_id=None, team_id=TEAM, user_id="UINSTALLER"
    )
    assert found is not None


async def test_two_instances_finishing_the_same_install_both_succeed_and_the_newer_stays(
    backend: Backend,
) -> None:
    store = ObjectStoreInstallationStore(backend.store)
    now = time.time()
    older = installation(token="xoxb-A-older", installed_at=now - 1)
    newer = installation(token="xoxb-A-newer", installed_at=now)

    await asyncio.gather(*(store.async_save(i) for i in (newer, older, newer, older)))

    bot = await store.async_find_bot(enterprise_id=None, team_id=TEAM)
    found = await store.async_find_installation(enterprise_id=None, team_id=TEAM)
    assert bot is not None and bot.bot_token == "xoxb-A-newer"
    assert found is not None and found.bot_token == "xoxb-A-newer"


async def test_a_rotated_token_replaces_the_one_it_rotated(backend: Backend) -> None:
    store = ObjectStoreInstallationStore(backend.store)
    first = installation(refresh_token="xoxe-1-A-1")
    await store.async_save(first)
    rotated = Installation(**first.to_dict_for_copying())
    rotated.bot_token, rotated.bot_refresh_token = "xoxb-A-2", "xoxe-1-A-2"
    await store.async_save(rotated)  # as Bolt's authorize saves it: same installed_at

    bot = await store.async_find_bot(enterprise_id=None, team_id=TEAM)
    assert bot is not None and (bot.bot_token, bot.bot_refresh_token) == ("xoxb-A-2", "xoxe-1-A-2")


async def test_a_rotation_finishing_after_an_uninstall_brings_no_token_back(
    backend: Backend,
) -> None:
    """Bolt read the bot to rotate its token; the workspace uninstalled meanwhile; then
    Bolt saves the rotated bot (as its bot-only authorization does: `async_save_bot`)."""
    store = ObjectStoreInstallationStore(backend.store)
    first = installation(refresh_token="xoxe-1-A-1")
    await store.async_save(first)
    rotated = first.to_bot()
    rotated.bot_token, rotated.bot_refresh_token = "xoxb-A-2", "xoxe-1-A-2"

    await store.async_delete_all(enterprise_id=None, team_id=TEAM)
    await store.async_save_bot(rotated)

    assert await store.async_find_bot(enterprise_id=None, team_id=TEAM) is None
    assert not [name for name in backend.raw_names() if name.startswith("installations/")]


async def test_deleting_an_installation_leaves_no_token(backend: Backend) -> None:
    store = ObjectStoreInstallationStore(backend.store)
    await store.async_save(installation())
    await store.async_save(installation("TBBBB2", token="xoxb-B-1"))

    await store.async_delete_all(enterprise_id=None, team_id=TEAM)

    assert await store.async_find_bot(enterprise_id=None, team_id=TEAM) is None
    assert await store.async_find_installation(enterprise_id=None, team_id=TEAM) is None
    names = backend.raw_names()
    assert all(TEAM not in name for name in names)
    assert not any("xoxb-A-1" in (backend.raw_read(name) or "") for name in names)
    assert (await store.async_find_bot(enterprise_id=None, team_id="TBBBB2")) is not None


async def test_a_reinstall_first_finishes_the_erasure_its_uninstall_left_pending(
    backend: Backend,
) -> None:
    """Uninstalled, with a write of a turn in flight that its check could not take back
    (storage failing just then): the reinstall deletes it before installing."""
    store = ObjectStoreInstallationStore(backend.store)
    tenant = Tenant(None, TEAM)
    await erase_team(backend.store, tenant)
    left = f"users/teams/-/{TEAM}/U0SAME01/notes.md"
    await backend.store.write(left, "the old installation's")
    offline = ObjectStoreInstallationStore(DeletesRefused(backend.store))

    with pytest.raises(StoreError):
        await offline.async_save(installation(token="xoxb-A-2"))  # the failure page
    assert await store.async_find_bot(enterprise_id=None, team_id=TEAM) is None
    await store.async_save(installation(token="xoxb-A-2"))  # the person tries again

    bot = await store.async_find_bot(enterprise_id=None, team_id=TEAM)
    assert bot is not None and bot.bot_token == "xoxb-A-2"
    assert left not in backend.raw_names()
    assert pending_key(tenant) not in backend.raw_names()


class DeletesRefused(StoreLayer):
    async def delete(self, key: str, *, if_generation: int | None = None) -> bool:
        raise StoreUnavailable("storage down")


async def test_ids_shaped_like_paths_find_nothing_and_touch_nothing(backend: Backend) -> None:
    store = ObjectStoreInstallationStore(backend.store)
    await store.async_save(installation())
    for team_id in ("../TAAAA1", f"{TEAM}/../{TEAM}", "-", "T/"):
        assert await store.async_find_bot(enterprise_id=None, team_id=team_id) is None
        assert await store.async_find_installation(enterprise_id=None, team_id=team_id) is None
        await store.async_delete_all(enterprise_id=None, team_id=team_id)
    assert await store.async_find_bot(enterprise_id=None, team_id=TEAM) is not None


# --- states ---------------------------------------------------------------------------

SECRET = "client-secret-0123456789abcdef"


def states_on(backend: Backend, now: float = 1_800_000_000.0) -> SignedOAuthStateStore:
    return SignedOAuthStateStore(backend.store, SECRET, clock=lambda: now)


async def test_issuing_a_state_stores_nothing_and_it_is_good_exactly_once(
    backend: Backend,
) -> None:
    states = states_on(backend)
    state = await states.async_issue()
    assert backend.raw_names() == [], "the install page stores nothing"

    assert await states.async_consume(state) is True
    [spent] = backend.raw_names()
    assert spent.startswith("oauth-states/") and spent.split("/")[1] in state
    assert await states.async_consume(state) is False, "a replayed state is refused"


async def test_of_two_redirects_with_one_state_exactly_one_wins(backend: Backend) -> None:
    states = states_on(backend)
    state = await states.async_issue()
    results = await asyncio.gather(*(states.async_consume(state) for _ in range(6)))
    assert sorted(results) == [False] * 5 + [True]


async def test_a_state_is_good_for_ten_minutes_and_no_longer(backend: Backend) -> None:
    issued_at = 1_800_000_000
    state = signed_state(SECRET.encode(), issued_at, "n" * 22)
    assert await states_on(backend, now=issued_at + 601).async_consume(state) is False
    assert await states_on(backend, now=issued_at - 60).async_consume(state) is False
    assert backend.raw_names() == []
    assert await states_on(backend, now=issued_at + 600).async_consume(state) is True


async def test_states_not_signed_with_the_client_secret_are_refused_without_touching_anything(
    backend: Backend,
) -> None:
    states = states_on(backend)
    issued = await states.async_issue()
    other_app = SignedOAuthStateStore(backend.store, "another-secret", clock=lambda: 1.8e9)
    seconds, nonce, _ = issued.split(".")
    for forged in (
        "",
        "x" * 43,
        "../" + issued,
        issued + "/..",
        issued[:-1],
        "%2e%2e" * 8,
        await other_app.async_issue(),
        f"{int(seconds) + 1}.{nonce}.{issued.split('.')[2]}",  # a later time, same signature
        "9" * 5000,
    ):
        assert await states.async_consume(forged) is False, forged[:40]
    assert backend.raw_names() == []
