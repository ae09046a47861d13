"""Which answer a Stop (the person's, learnt from Slack's refusal of the stream or from
`agent_session_stopped`) cancels: the one running in that conversation in this process,
and nothing else; which answers a restart cuts off (all of them); and why each ended.

The turns are real asyncio tasks, as `Answerer.answer` runs them: an answer being written
waits until the test lets it finish.
"""

from __future__ import annotations

import asyncio
import gc
import weakref
from contextlib import ExitStack

import pytest

from app.slack.conversation.running_turns import EndedEarly, RunningTurns
from tests.answers_in_progress import Answer, settled

CHANNEL, OTHER_CHANNEL = "D0STOP", "D0ELSE"
THREAD, OTHER_THREAD = "1712345678.000100", "1712345678.000200"


async def test_stop_cancels_the_answer_running_in_that_conversation() -> None:
    turns = RunningTurns()
    answer = Answer("Here is the plan for the migration...")
    async with settled(answer):
        with turns.running(CHANNEL, THREAD, answer.task):
            assert turns.stop(CHANNEL, THREAD)

            with pytest.raises(asyncio.CancelledError):
                await answer.task
            # What lets the answerer tell a Stop from a shutdown.
            assert turns.why_ended(answer.task) is EndedEarly.STOPPED


async def test_stop_leaves_the_answers_of_other_conversations_running() -> None:
    turns = RunningTurns()
    stopped = Answer("stopped")
    same_channel = Answer("Answer in another thread of the DM.")
    other_channel = Answer("Answer in another person's DM, same thread ts.")
    async with settled(stopped, same_channel, other_channel):
        with (
            turns.running(CHANNEL, OTHER_THREAD, same_channel.task),
            turns.running(OTHER_CHANNEL, THREAD, other_channel.task),
            turns.running(CHANNEL, THREAD, stopped.task),
        ):
            assert turns.stop(CHANNEL, THREAD)

            assert await same_channel.finish() == "Answer in another thread of the DM."
            assert await other_channel.finish() == "Answer in another person's DM, same thread ts."
            assert turns.why_ended(same_channel.task) is None
            assert turns.why_ended(other_channel.task) is None
            assert stopped.task.cancelled()


async def test_a_stop_with_no_answer_running_here_says_so() -> None:
    # The answer runs on another instance, or none was asked for: nothing to cancel.
    assert not RunningTurns().stop(CHANNEL, THREAD)


async def test_a_stop_after_the_answer_finished_cancels_nothing() -> None:
    turns = RunningTurns()
    answer = Answer("Done already.")
    async with settled(answer):
        with turns.running(CHANNEL, THREAD, answer.task):
            assert await answer.finish() == "Done already."

            # Still inside the turn (finishing up), but the answer itself is complete.
            assert not turns.stop(CHANNEL, THREAD)
            assert turns.why_ended(answer.task) is None

        assert not turns.stop(CHANNEL, THREAD), "and once the turn ended"


async def test_a_turn_cancelled_by_a_shutdown_is_not_taken_for_a_stop() -> None:
    turns = RunningTurns()
    answer = Answer("...")
    async with settled(answer):
        with turns.running(CHANNEL, THREAD, answer.task):
            answer.task.cancel()  # Orion itself is being cancelled, not the person's Stop
            with pytest.raises(asyncio.CancelledError):
                await answer.task

            assert turns.why_ended(answer.task) is None


async def test_a_stopped_turn_is_forgotten_once_it_ends() -> None:
    turns = RunningTurns()
    answer = Answer("...")
    async with settled(answer):
        with turns.running(CHANNEL, THREAD, answer.task):
            assert turns.stop(CHANNEL, THREAD)
            await asyncio.gather(answer.task, return_exceptions=True)

        assert turns.why_ended(answer.task) is None, "nothing kept after the turn"
        assert not turns.stop(CHANNEL, THREAD)


async def test_an_instance_keeps_no_answer_after_its_turn_ended() -> None:
    # One instance answers turn after turn: none may stay referenced once it is over.
    turns = RunningTurns()
    answer = Answer("Done.")
    with turns.running(CHANNEL, THREAD, answer.task):
        await answer.finish()
    ended = weakref.ref(answer.task)

    del answer
    await asyncio.sleep(0)  # one loop iteration: the loop lets go of the finished task
    gc.collect()

    assert ended() is None


async def test_an_earlier_answer_ending_leaves_the_newer_one_in_the_conversation_stoppable() -> (
    None
):
    # The person wrote again before the first answer was done: two turns, one conversation.
    turns = RunningTurns()
    first, second = Answer("first answer"), Answer("second answer")
    async with settled(first, second):
        with ExitStack() as second_turn:
            with turns.running(CHANNEL, THREAD, first.task):
                second_turn.enter_context(turns.running(CHANNEL, THREAD, second.task))
                assert await first.finish() == "first answer"
            # The first turn has ended; the second is still being written.

            assert turns.stop(CHANNEL, THREAD)
            with pytest.raises(asyncio.CancelledError):
                await second.task
            assert turns.why_ended(second.task) is EndedEarly.STOPPED


async def test_a_restart_cuts_off_every_answer_running_and_says_why() -> None:
    turns = RunningTurns()
    first, second, done = Answer("first"), Answer("second"), Answer("done")
    async with settled(first, second, done):
        with (
            turns.running(CHANNEL, THREAD, first.task),
            turns.running(OTHER_CHANNEL, OTHER_THREAD, second.task),
        ):
            assert await done.finish() == "done"
            assert turns.count == 2

            assert turns.cut_off_all() == 2

            for answer in (first, second):
                with pytest.raises(asyncio.CancelledError):
                    await answer.task
                assert turns.why_ended(answer.task) is EndedEarly.CUT_OFF
            assert turns.cut_off_all() == 0, "each is cut off once"


async def test_a_stopped_answer_is_not_cut_off_again() -> None:
    turns = RunningTurns()
    answer = Answer("...")
    async with settled(answer):
        with turns.running(CHANNEL, THREAD, answer.task):
            assert turns.stop(CHANNEL, THREAD)
            assert turns.cut_off_all() == 0
            assert turns.why_ended(answer.task) is EndedEarly.STOPPED
