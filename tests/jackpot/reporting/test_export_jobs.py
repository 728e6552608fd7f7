"""The payout log exported in the background (issue 12, item 4): asked for with a POST, built by a
real Celery worker over the real Redis, polled, downloaded with its SHA-256, kept for a time.

The worker tests use `celery_worker` (tests/workers.py): a worker subprocess on the test
database, sharing an EXPORT_DIR under the test's tmp_path with this process (the web side).
"""

from __future__ import annotations

import base64
import hashlib
import os
import time
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.test import Client
from django.utils import timezone

from core import dispatch
from core.circuit import redis_circuit
from jackpot.bodies.awards import AwardFilters
from jackpot.models import Award, AwardKind, AwardStatus, ExportJob, ExportStatus, Pool
from jackpot.reporting import export_jobs
from jackpot.reporting.export_jobs import Built, export_job_build, export_jobs_sweep
from jackpot.reporting.exports import award_rows, awards_filtered
from tables.models import Round, RoundState
from tests.conftest import make_floor, uth_play, uth_seat
from tests.staff import person, token_client
from tests.workers import wait_for

EXPORTS = "/api/v1/awards/exports"


def _staff(django_user_model, name: str, role: str) -> Client:
    return token_client(person(name, role))


def _play_a_jackpot(floor) -> None:
    """A real round: a jackpot royal (pending) and an envy (approved), through the API."""
    terminal = floor.uth[0]
    terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1), uth_seat(2)]})
    settled = terminal.post(
        "/rounds/r-1/result",
        {
            "board": ["Ah", "Kh", "Qh", "2c", "3d"],
            "dealer": ["9s", "9d"],
            "seats": [uth_play(1, "Jh Th"), uth_play(2, "4c 5c", "fold")],
        },
    )
    assert settled.status_code == 200, settled.content


def _many_awards(floor, count: int) -> None:
    """`count` awards written straight to their tables (not money: only the export reads them),
    42 to a settled round (7 seats, 6 kinds), numbered after the pool's last."""
    table_id, now = floor.uth[0].table_id, timezone.now()
    kinds = list(AwardKind)
    statuses = [AwardStatus.APPROVED, AwardStatus.PAID, AwardStatus.PENDING]
    last = Award.objects.filter(pool_id=floor.pool_id).count()
    pool = Pool.objects.get(pk=floor.pool_id)
    rounds = Round.objects.bulk_create(
        Round(
            table_id=table_id,
            round_id=f"bulk-{uuid.uuid4().hex[:12]}",
            pool_id=floor.pool_id,
            stake_cents=pool.stake_cents,
            paytable_version=pool.paytable_version,
            verification_threshold_cents=pool.verification_threshold_cents,
            state=RoundState.SETTLED,
            opened_at=now,
            closed_at=now,
            open_fingerprint="0" * 64,
            open_response={},
        )
        for number in range(count // 42 + 1)
    )

    def award(number: int, follows: Award | None = None) -> Award:
        return Award(
            pool_id=floor.pool_id,
            round=rounds[number // 42],
            seat=number % 7 + 1,
            kind=kinds[number // 7 % 6],
            amount_cents=5000 + number,
            status=statuses[number % 3],
            number=last + number + 1,
            created_at=now + timedelta(microseconds=number),
            follows=follows,
        )

    # A round's envies follow its royal (a CHECK: every envy follows an award), written first
    # as the grant writes them; a round's 42 awards begin with its royals.
    envies = [number for number in range(count) if kinds[number // 7 % 6] == AwardKind.ENVY]
    firsts = Award.objects.bulk_create(award(n) for n in range(count) if n not in envies)
    royal = {a.round_id: a for a in reversed(firsts) if a.kind == AwardKind.ROYAL_FLUSH}
    Award.objects.bulk_create(award(n, royal[rounds[n // 42].pk]) for n in envies)


def _synchronous(client: Client, query: str = "") -> bytes:
    """export.csv over a day either side of now (it takes a bounded range: the awards of these
    tests are all won now), with `query`'s filters."""
    now, iso, day = timezone.now(), "%Y-%m-%dT%H:%M:%SZ", timedelta(days=1)
    bounds = f"from={(now - day).strftime(iso)}&to={(now + day).strftime(iso)}"
    query = f"{query}&{bounds}" if query else f"?{bounds}"
    response = client.get(f"/api/v1/awards/export.csv{query}")
    assert response.status_code == 200
    return b"".join(response.streaming_content)


def _poll_done(client: Client, url: str, *, within_s: float) -> dict:
    answers: list[dict] = []

    def done() -> bool:
        answers.append(client.get(url).json())
        return answers[-1]["status"] == "done"

    wait_for(done, within_s=within_s, what=f"the export was built: {answers[-1:]}")
    return answers[-1]


def _files(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir()) if directory.exists() else []


@pytest.fixture
def export_dir(tmp_path, settings) -> Path:
    directory = tmp_path / "exports"
    settings.EXPORT_DIR = directory
    return directory


# --- with a real worker -------------------------------------------------------------------------


def test_post_poll_download_the_same_bytes_as_the_synchronous_csv(
    celery_worker, export_dir, django_user_model
):
    floor = make_floor(uth_tables=1)
    _play_a_jackpot(floor)
    _many_awards(floor, 60)
    auditor = _staff(django_user_model, "ida", "auditor")
    celery_worker(EXPORT_DIR=str(export_dir), EXPORT_BATCH_SIZE="7")

    envy = ({"kind": "envy", "status": "approved"}, "?kind=envy&status=approved")
    for body, query in [({}, ""), envy]:
        started = auditor.post(EXPORTS, body, content_type="application/json")
        assert started.status_code == 202, started.content
        job = started.json()
        assert started["Location"] == job["url"] == f"{EXPORTS}/{job['id']}"
        assert job["status"] == "queued" and job["requested_by"] == "ida"
        assert job["download_url"] is None

        done = _poll_done(auditor, job["url"], within_s=30)
        download = auditor.get(done["download_url"])
        assert download.status_code == 200
        assert download["Content-Type"] == "text/csv; charset=utf-8"
        content = b"".join(download.streaming_content)
        digest = hashlib.sha256(content)
        # One SHA-256 everywhere: the bytes served, the header, the job, the file on disk.
        assert download["X-Content-SHA256"] == done["sha256"] == digest.hexdigest()
        assert download["Repr-Digest"] == f"sha-256=:{base64.b64encode(digest.digest()).decode()}:"
        assert (export_dir / f"awards-export-{job['id']}.csv").read_bytes() == content
        assert done["size_bytes"] == len(content)
        # The same payout log as the synchronous export, line for line, digest line included.
        assert content == _synchronous(auditor, query)
        rows = len(content.splitlines()) - 2
        assert done["rows_written"] == done["rows_total"] == rows > 0
        assert ExportJob.objects.get(pk=job["id"]).attempts == 1
    # Each job one final file, no temporary file left.
    assert _files(export_dir) == sorted(f"awards-export-{n}.csv" for n in _job_ids())


def _job_ids() -> list[int]:
    return list(ExportJob.objects.values_list("pk", flat=True))


def test_a_worker_killed_mid_export_leaves_it_to_another_which_writes_one_whole_file(
    celery_worker, export_dir, django_user_model
):
    floor = make_floor(uth_tables=1)
    _many_awards(floor, 1200)
    auditor = _staff(django_user_model, "ida", "auditor")
    # Tiny batches make the export slow enough to be killed in the middle; Redis gives the
    # killed worker's task to another after 2 s; a builder silent for 1 s is dead.
    env = {
        "EXPORT_DIR": str(export_dir),
        "EXPORT_BATCH_SIZE": "2",
        "CELERY_VISIBILITY_TIMEOUT_SECONDS": "2",
        "EXPORT_STALL_SECONDS": "1",
    }
    first = celery_worker(**env)
    job_id = auditor.post(EXPORTS, {}, content_type="application/json").json()["id"]
    wait_for(
        lambda: ExportJob.objects.get(pk=job_id).rows_written >= 100,
        within_s=30,
        what="the first worker is writing",
    )
    first.kill()  # kill -9, in the middle of the file
    killed = ExportJob.objects.get(pk=job_id)
    assert killed.status == ExportStatus.RUNNING and killed.rows_written < killed.rows_total
    assert any(name.endswith(".part") for name in _files(export_dir))  # its half file
    assert not (export_dir / f"awards-export-{job_id}.csv").exists()  # never the final name

    time.sleep(2.5)  # past the visibility timeout: the next worker takes the task back
    celery_worker(**env)
    done = _poll_done(auditor, f"{EXPORTS}/{job_id}", within_s=90)

    assert ExportJob.objects.get(pk=job_id).attempts == 2  # rebuilt once, from scratch
    assert _files(export_dir) == [f"awards-export-{job_id}.csv"]  # one file, no half file
    content = b"".join(auditor.get(done["download_url"]).streaming_content)
    assert hashlib.sha256(content).hexdigest() == done["sha256"]
    assert content == _synchronous(auditor)
    assert done["rows_written"] == 1200 == len(content.splitlines()) - 2


def test_redis_down_at_the_post_the_sweeper_sends_it_and_the_file_expires(
    celery_worker, export_dir, django_user_model
):
    floor = make_floor(uth_tables=1)
    _play_a_jackpot(floor)
    auditor = _staff(django_user_model, "ida", "auditor")
    worker = celery_worker(
        beat=True,
        EXPORT_DIR=str(export_dir),
        EXPORT_SWEEP_SECONDS="1",
        EXPORT_RESEND_AFTER_SECONDS="3",
    )
    # Redis failed a moment ago in this web process: the task is not sent (core.dispatch).
    redis_circuit.failed(RuntimeError("Redis is down"))
    started = auditor.post(EXPORTS, {"pool": floor.pool_id}, content_type="application/json")
    assert started.status_code == 202  # the auditor is answered at once all the same
    job_id = started.json()["id"]
    time.sleep(1.5)
    assert ExportJob.objects.get(pk=job_id).status == ExportStatus.QUEUED  # nothing sent it
    refused = auditor.get(f"{EXPORTS}/{job_id}/download")
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "export_not_ready"

    done = _poll_done(auditor, f"{EXPORTS}/{job_id}", within_s=30)
    worker.logged(f"sent again [{job_id}]")
    job = ExportJob.objects.get(pk=job_id)
    assert job.attempts == 1  # built once
    assert job.expires_at - job.finished_at == timedelta(hours=72)  # EXPORT_RETENTION_HOURS
    assert _files(export_dir) == [f"awards-export-{job_id}.csv"]
    assert auditor.get(done["download_url"]).status_code == 200

    # Its retention is over: beat's sweeper deletes the file, and the download is gone.
    ExportJob.objects.filter(pk=job_id).update(expires_at=timezone.now() - timedelta(seconds=1))
    wait_for(
        lambda: ExportJob.objects.get(pk=job_id).status == ExportStatus.EXPIRED,
        within_s=60,
        what="the sweeper expired the job",
    )
    assert _files(export_dir) == []
    gone = auditor.get(done["download_url"])
    assert gone.status_code == 410 and gone.json()["error"]["code"] == "export_expired"
    expired = auditor.get(f"{EXPORTS}/{job_id}").json()
    assert expired["status"] == "expired" and expired["sha256"] == done["sha256"]  # on record


# --- the build and the sweep, in process ------------------------------------------------------


def _queued_job(user, **filters) -> ExportJob:
    from jackpot.bodies.exports import ExportRequest
    from jackpot.reporting.export_jobs import export_job_create

    return export_job_create(user=user, filters=ExportRequest.model_validate(filters))


@pytest.mark.django_db(transaction=True)  # the task is sent at the commit, as in production
def test_the_answer_is_the_job_as_asked_even_when_a_worker_takes_it_at_once(
    floor, export_dir, django_user_model, monkeypatch
):
    """A worker may start the job between the commit and the answer (it did, once, on an idle
    machine): the 202 still shows the job as it was asked for, queued."""
    _play_a_jackpot(floor)
    auditor = _staff(django_user_model, "ida", "auditor")

    def taken_at_once(name: str, job_id: int) -> bool:  # the task's delivery, then its start
        assert export_job_build(job_id=job_id) == Built.DONE
        return True

    monkeypatch.setattr(dispatch, "send", taken_at_once)
    started = auditor.post(EXPORTS, {}, content_type="application/json")
    assert started.status_code == 202, started.content
    assert started.json()["status"] == "queued"
    assert ExportJob.objects.get(pk=started.json()["id"]).status == ExportStatus.DONE


@pytest.mark.django_db
def test_a_job_built_is_left_alone_by_another_delivery(floor, export_dir, django_user_model):
    _play_a_jackpot(floor)
    job = _queued_job(django_user_model.objects.create(username="ida"))

    assert export_job_build(job_id=job.pk) == Built.DONE
    built = ExportJob.objects.get(pk=job.pk)
    assert export_job_build(job_id=job.pk) == Built.LEFT_ALONE
    assert export_job_build(job_id=999_999) == Built.LEFT_ALONE

    again = ExportJob.objects.get(pk=job.pk)
    assert (again.attempts, again.sha256, again.finished_at) == (
        1,
        built.sha256,
        built.finished_at,
    )
    assert _files(export_dir) == [f"awards-export-{job.pk}.csv"]


@pytest.mark.django_db
def test_a_live_builder_is_left_alone_and_a_dead_ones_job_is_rebuilt_from_scratch(
    floor, export_dir, django_user_model
):
    _play_a_jackpot(floor)
    job = _queued_job(django_user_model.objects.create(username="ida"))
    dead = uuid.uuid4()
    export_dir.mkdir()
    half = export_dir / f".awards-export-{job.pk}-{dead.hex}.part"
    half.write_text("award_id,won_at_utc\n1,2026")  # what a killed builder left
    claimed = {"status": ExportStatus.RUNNING, "builder": dead, "attempts": 1, "rows_written": 1}

    # Its builder wrote progress a moment ago: a duplicate delivery does nothing.
    ExportJob.objects.filter(pk=job.pk).update(progress_at=timezone.now(), **claimed)
    assert export_job_build(job_id=job.pk) == Built.LEFT_ALONE
    assert half.exists() and ExportJob.objects.get(pk=job.pk).builder == dead

    # Silent for longer than EXPORT_STALL_SECONDS: dead; the job is built anew.
    old = timezone.now() - timedelta(hours=1)
    ExportJob.objects.filter(pk=job.pk).update(progress_at=old, **claimed)
    assert export_job_build(job_id=job.pk) == Built.DONE
    rebuilt = ExportJob.objects.get(pk=job.pk)
    assert rebuilt.attempts == 2 and rebuilt.builder != dead
    assert _files(export_dir) == [f"awards-export-{job.pk}.csv"]  # the half file is gone
    content = (export_dir / f"awards-export-{job.pk}.csv").read_bytes()
    assert hashlib.sha256(content).hexdigest() == rebuilt.sha256
    assert content.startswith(b"award_id,won_at_utc,pool,")
    assert rebuilt.rows_written == rebuilt.rows_total == 2


@pytest.mark.django_db
def test_a_builder_whose_job_was_taken_over_stops_and_leaves_no_file(
    floor, export_dir, django_user_model, settings, monkeypatch
):
    _many_awards(floor, 10)
    settings.EXPORT_BATCH_SIZE = 3
    job = _queued_job(django_user_model.objects.create(username="ida"))
    pages = export_jobs.award_pages
    other = uuid.uuid4()

    def taken_over_after_the_first_page(*args, **kwargs):
        for number, page in enumerate(pages(*args, **kwargs)):
            if number == 1:  # another delivery claims the job (its builder looked dead)
                ExportJob.objects.filter(pk=job.pk).update(builder=other)
            yield page

    monkeypatch.setattr(export_jobs, "award_pages", taken_over_after_the_first_page)
    assert export_job_build(job_id=job.pk) == Built.TAKEN_OVER
    assert _files(export_dir) == []  # neither a half file nor a final one
    left = ExportJob.objects.get(pk=job.pk)
    assert (left.status, left.builder, left.rows_written) == (ExportStatus.RUNNING, other, 3)


@pytest.mark.django_db
def test_an_error_fails_the_job_with_its_reason_and_serves_nothing(
    floor, export_dir, django_user_model
):
    _play_a_jackpot(floor)
    auditor = _staff(django_user_model, "ida", "auditor")
    job = _queued_job(django_user_model.objects.get(username="ida"))
    export_dir.write_text("a file where the directory should be")

    assert export_job_build(job_id=job.pk) == Built.FAILED
    failed = auditor.get(f"{EXPORTS}/{job.pk}").json()
    assert failed["status"] == "failed" and failed["error"].startswith("FileExistsError")
    refused = auditor.get(f"{EXPORTS}/{job.pk}/download")
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "export_failed"
    assert export_job_build(job_id=job.pk) == Built.LEFT_ALONE  # a failed job stays failed


@pytest.mark.django_db
def test_the_sweeper_sends_each_waiting_job_once_a_period(
    floor, export_dir, django_user_model, settings
):
    user = django_user_model.objects.create(username="ida")
    _just_asked, waiting, stalled, alive = (_queued_job(user) for _ in range(4))
    long_ago = timezone.now() - timedelta(hours=1)
    ExportJob.objects.filter(pk__in=[waiting.pk, stalled.pk, alive.pk]).update(sent_at=long_ago)
    ExportJob.objects.filter(pk=stalled.pk).update(status="running", progress_at=long_ago)
    ExportJob.objects.filter(pk=alive.pk).update(status="running", progress_at=timezone.now())

    swept = export_jobs_sweep()
    assert swept.resent == [waiting.pk, stalled.pk] and swept.expired == []
    # Sent again just now: not again before another period.
    assert export_jobs_sweep().resent == []


# --- the API ------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_rights_and_refusals(floor, export_dir, django_user_model):
    auditor = _staff(django_user_model, "ida", "auditor")
    admin = _staff(django_user_model, "ada", "admin")
    supervisor = _staff(django_user_model, "ana", "supervisor")
    job = auditor.post(EXPORTS, {"table": floor.uth[0].table_id}, content_type="application/json")
    assert job.status_code == 202
    url = job.json()["url"]

    for path in (url, f"{url}/download"):
        assert supervisor.get(path).status_code == 403
        assert Client().get(path).status_code == 401
    assert supervisor.post(EXPORTS, {}, content_type="application/json").status_code == 403
    assert Client().post(EXPORTS, {}, content_type="application/json").status_code == 401
    assert admin.get(url).json()["filters"] == {
        "status": None,
        "pool": None,
        "table": floor.uth[0].table_id,
        "kind": None,
        "from": None,
        "to": None,
    }

    missing = auditor.get(f"{EXPORTS}/999999")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "export_not_found"
    assert auditor.get(f"{EXPORTS}/999999/download").status_code == 404
    not_ready = auditor.get(f"{url}/download")
    assert not_ready.status_code == 409 and not_ready.json()["error"]["code"] == "export_not_ready"

    def refusal(body: object) -> tuple[str, str | None]:
        answer = auditor.post(EXPORTS, body, content_type="application/json").json()["error"]
        return answer["code"], answer["param"]

    assert refusal({"from": "yesterday"}) == ("invalid_request", "from")
    assert refusal({"from": "2026-01-01T00:00:00"}) == ("invalid_request", "from")  # no offset
    assert refusal({"to": 1767225600}) == ("invalid_request", "to")  # a string, not seconds
    assert refusal({"pool": "1"}) == ("invalid_request", "pool")
    assert refusal({"pool": 2**63}) == ("invalid_request", "pool")
    assert refusal({"kind": "royal"}) == ("invalid_request", "kind")
    assert refusal({"limit": 5}) == ("unknown_field", "limit")
    assert refusal([]) == ("invalid_request", None)
    assert ExportJob.objects.count() == 1  # nothing refused was recorded


@pytest.mark.django_db
def test_the_synchronous_export_reads_in_pages_without_a_cursor(floor, django_user_model):
    _many_awards(floor, 25)
    awards = awards_filtered(AwardFilters())
    whole = "".join(award_rows(awards))
    for page_size in (1, 5, 24, 25, 26):  # pages that end exactly at the last award too
        assert "".join(award_rows(awards, page_size=page_size)) == whole
    assert len(whole.splitlines()) == 25 + 2


@pytest.mark.django_db
def test_an_export_holds_the_awards_that_existed_when_it_was_asked_for(
    floor, export_dir, django_user_model
):
    _many_awards(floor, 5)
    job = _queued_job(django_user_model.objects.create(username="ida"))
    _many_awards(floor, 3)  # won after the POST, before a worker got to it
    assert export_job_build(job_id=job.pk) == Built.DONE
    assert ExportJob.objects.get(pk=job.pk).rows_written == 5
    assert os.path.getsize(export_dir / f"awards-export-{job.pk}.csv") > 0


@pytest.mark.django_db
def test_files_are_never_named_by_the_database(floor, export_dir, tmp_path, django_user_model):
    """An insider who can write the job's row (the application's role may UPDATE it) points
    a done job at the service's secrets, and an expired one at the anchors: the download serves
    the job's own file or nothing, and the sweeper deletes the job's own file and nothing else.
    A link planted in EXPORT_DIR under a job's name is not followed out of it either."""
    _play_a_jackpot(floor)
    auditor = _staff(django_user_model, "ida", "auditor")
    secrets = tmp_path / "env"
    secrets.write_text("JOURNAL_HMAC_KEY=the-key\n")
    anchor = tmp_path / "journal-anchor-20261201T060000Z.json"
    anchor.write_text("{}\n")
    job = _queued_job(django_user_model.objects.create(username="cashier"))
    assert export_job_build(job_id=job.pk) == Built.DONE
    own = (export_dir / f"awards-export-{job.pk}.csv").read_bytes()

    ExportJob.objects.filter(pk=job.pk).update(file_path=str(secrets))
    served = auditor.get(f"{EXPORTS}/{job.pk}/download")
    assert served.status_code == 200 and b"".join(served.streaming_content) == own

    (export_dir / f"awards-export-{job.pk}.csv").unlink()
    (export_dir / f"awards-export-{job.pk}.csv").symlink_to(secrets)
    refused = auditor.get(f"{EXPORTS}/{job.pk}/download")
    assert refused.status_code == 410 and b"the-key" not in refused.content

    ExportJob.objects.filter(pk=job.pk).update(
        file_path=str(anchor), expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert export_jobs_sweep().expired == [job.pk]
    assert anchor.read_text() == "{}\n" and secrets.read_text() == "JOURNAL_HMAC_KEY=the-key\n"
    assert _files(export_dir) == []  # the planted link removed, not what it pointed at
