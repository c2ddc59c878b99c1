"""Wrong passwords are throttled on POST /api/auth/token and the Django admin's login form
(docs/contract.md "Failed logins"): an account and address pair, or an address, is locked out
for a cool-off that doubles with each further failure; an account alone is only slowed down, and
never for an address it logged in from before; a success clears its pair; a lockout logs one
WARNING without the password."""

import logging
from datetime import timedelta

import pytest
from playwright.sync_api import expect
from rest_framework.test import APIClient

from tests import builders
from tests.conftest import assert_error
from tests.tenants.test_admin_login import log_in, text

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]

EMAIL = "ada@acme.example"
WRONG = "Wrong-Guess-4711"
HOME = "203.0.113.7"
ELSEWHERE = "198.51.100.20"
LOCKED_MESSAGE = "Too many failed logins; try again later"


@pytest.fixture
def ada(organization, fast_password_hashing):
    return builders.admin(organization, EMAIL)


def token_login(password: str, address: str = HOME, email: str = EMAIL):
    return APIClient().post(
        "/api/auth/token",
        {"email": email, "password": password},
        format="json",
        REMOTE_ADDR=address,
    )


def fail(times: int, address: str = HOME, email: str = EMAIL) -> None:
    for _ in range(times):
        assert_error(token_login(WRONG, address, email), 401, "Invalid email or password")


def assert_locked(response, retry_after: int) -> None:
    assert_error(response, 429, LOCKED_MESSAGE, code="login_locked")
    assert response["Retry-After"] == str(retry_after)


@pytest.mark.usefixtures("ada")
def test_fifth_wrong_password_from_one_address_locks_the_pair_out_with_retry_after():
    fail(4)

    assert_locked(token_login(WRONG), 60)
    # The right password waits too: the lockout is checked before any password is.
    assert_locked(token_login(builders.PASSWORD), 60)


@pytest.mark.usefixtures("ada")
def test_the_same_account_from_another_address_is_not_locked_out():
    fail(4)
    assert_locked(token_login(WRONG), 60)

    assert token_login(builders.PASSWORD, address=ELSEWHERE).status_code == 200
    assert_locked(token_login(builders.PASSWORD), 60)


@pytest.mark.usefixtures("ada")
def test_the_lockout_ends_after_its_cool_off_and_a_further_failure_doubles_it(traveller):
    fail(4)
    assert_locked(token_login(WRONG), 60)

    traveller.move_to(builders.NOW + timedelta(seconds=59))
    assert_locked(token_login(builders.PASSWORD), 1)
    traveller.move_to(builders.NOW + timedelta(seconds=61))
    assert_locked(token_login(WRONG), 120)  # the sixth failure of the window: twice as long
    traveller.move_to(builders.NOW + timedelta(seconds=61 + 121))
    assert_locked(token_login(WRONG), 240)
    traveller.move_to(builders.NOW + timedelta(seconds=61 + 121 + 241))
    assert token_login(builders.PASSWORD).status_code == 200


@pytest.mark.usefixtures("ada")
def test_the_growing_lockout_stops_at_its_maximum(traveller, settings):
    settings.LOGIN_LOCKOUT_MAX_SECONDS = 150
    fail(4)
    assert_locked(token_login(WRONG), 60)
    traveller.move_to(builders.NOW + timedelta(seconds=61))
    assert_locked(token_login(WRONG), 120)
    traveller.move_to(builders.NOW + timedelta(seconds=61 + 121))
    assert_locked(token_login(WRONG), 150)


@pytest.mark.usefixtures("ada")
def test_a_success_clears_the_pairs_count():
    fail(4)
    assert token_login(builders.PASSWORD).status_code == 200

    fail(4)
    assert_locked(token_login(WRONG), 60)


@pytest.mark.usefixtures("ada")
def test_one_address_guessing_many_accounts_is_locked_out_for_all_of_them(settings):
    settings.LOGIN_FAILURE_LIMIT_PER_ADDRESS = 6
    for n in range(5):
        fail(1, email=f"nobody-{n}@example.com")

    assert_locked(token_login(WRONG, email="nobody-5@example.com"), 60)
    # Ada's own right password from that address waits; from another one it is let in.
    assert_locked(token_login(builders.PASSWORD), 60)
    assert token_login(builders.PASSWORD, address=ELSEWHERE).status_code == 200


@pytest.mark.usefixtures("ada")
def test_guesses_from_many_addresses_slow_the_account_down_but_never_lock_its_admin_out(
    traveller,
):
    assert token_login(builders.PASSWORD, address=HOME).status_code == 200  # Ada's own address
    for n in range(9):
        fail(1, address=f"192.0.2.{n}")
    # The tenth failure for the account: every new address now waits 2 seconds.
    assert_error(token_login(WRONG, address="192.0.2.9"), 401)

    slowed = token_login(builders.PASSWORD, address="192.0.2.100")
    assert_error(slowed, 429, code="login_slowed_down")
    assert slowed["Retry-After"] == "2"
    # Ada, from where she logged in before, is not slowed down.
    assert token_login(builders.PASSWORD, address=HOME).status_code == 200

    traveller.move_to(builders.NOW + timedelta(seconds=2))
    assert_error(token_login(WRONG, address="192.0.2.100"), 401)
    assert token_login(WRONG, address="192.0.2.101")["Retry-After"] == "4"  # growing
    traveller.move_to(builders.NOW + timedelta(seconds=6))
    assert token_login(builders.PASSWORD, address="192.0.2.101").status_code == 200


def test_a_lockout_logs_one_warning_without_the_password(ada, caplog):
    caplog.set_level(logging.INFO)
    fail(4)
    assert not [record for record in caplog.records if record.levelno >= logging.WARNING]

    assert_locked(token_login(WRONG), 60)

    warnings = [record for record in caplog.records if record.levelno == logging.WARNING]
    assert len(warnings) == 1
    line = warnings[0].getMessage()
    assert warnings[0].name == "tenants.login_throttle"
    assert "account=a***@acme.example" in line
    assert f"address={HOME}" in line
    assert "failures=5" in line
    assert "retry_after=60s" in line
    assert EMAIL not in line
    assert WRONG not in caplog.text


@pytest.mark.usefixtures("ada")
def test_without_rate_limits_nothing_is_throttled(settings):
    settings.RATELIMIT_ENABLE = False
    fail(12)
    assert token_login(builders.PASSWORD).status_code == 200


@pytest.mark.usefixtures("ada")
def test_the_admin_login_form_refuses_with_a_message_and_429_after_five_failures():
    for _ in range(4):
        _, answer = log_in(EMAIL, WRONG)
        assert answer.status_code == 200
        assert "Please enter the correct email and password" in text(answer)

    _, answer = log_in(EMAIL, WRONG)

    assert answer.status_code == 429
    assert answer["Retry-After"] == "60"
    assert "Too many failed logins from your address. Try again in 60 seconds." in text(answer)
    assert "Please enter the correct email and password" not in text(answer)
    _, right = log_in(EMAIL)
    assert right.status_code == 429
    assert "Too many failed logins" in text(right)


@pytest.mark.usefixtures("ada")
def test_the_admin_form_says_the_wait_in_minutes_once_it_is_long(settings):
    settings.LOGIN_LOCKOUT_SECONDS = 600
    for _ in range(4):
        log_in(EMAIL, WRONG)
    _, answer = log_in(EMAIL, WRONG)
    assert answer.status_code == 429
    assert answer["Retry-After"] == "600"
    assert "Too many failed logins from your address. Try again in 10 minutes." in text(answer)


@pytest.mark.usefixtures("ada")
def test_the_admin_form_and_the_management_api_count_together():
    fail(3, address="127.0.0.1")  # the Django test client's address
    _, answer = log_in(EMAIL, WRONG)
    assert answer.status_code == 200
    _, answer = log_in(EMAIL, WRONG)
    assert answer.status_code == 429
    assert_locked(token_login(builders.PASSWORD, address="127.0.0.1"), 60)


@pytest.mark.usefixtures("ada")
def test_a_successful_admin_login_clears_the_pairs_count():
    for _ in range(4):
        assert log_in(EMAIL, WRONG)[1].status_code == 200
    assert log_in(EMAIL)[1].status_code == 302
    for _ in range(4):
        assert log_in(EMAIL, WRONG)[1].status_code == 200


def test_the_admin_login_page_shows_the_lockout_in_a_browser(
    browser, live_server, transactional_db, settings
):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.LOGIN_FAILURE_LIMIT = 2
    builders.admin(builders.organization("Acme Deliveries"), EMAIL)
    page = browser.new_page()
    page.goto(f"{live_server.url}/admin/login/?next=/admin/")
    answers = []
    page.on("response", lambda response: answers.append(response.status))
    for _ in range(2):
        page.fill("#id_username", EMAIL)
        page.fill("#id_password", WRONG)
        page.click("input[type=submit]")
        page.wait_for_load_state()

    expect(page.locator(".errornote")).to_contain_text(
        "Too many failed logins from your address. Try again in 60 seconds."
    )
    assert 429 in answers
    expect(page).to_have_url(f"{live_server.url}/admin/login/?next=/admin/")
