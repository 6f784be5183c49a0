"""The console in a real browser (headless Chromium from Debian, driven by Selenium), run
by ConsoleBrowserTests against a server the Swift test started. Each flow is what a person
does; axe-core checks every page it reaches (no serious or critical violation), and a
screenshot of each page is saved at 1280 and 360 px wide.

    python console_flows.py production --url URL --conninfo CONNINFO --screenshots DIR \
        --moderator EMAIL --user EMAIL --reported-post ID --suspect-id ID
    python console_flows.py trust --url URL --screenshots DIR

`production`: token mode. Codes are read from the outbox with psql (no mail server: the
message waits there). `trust`: the dev mailbox shows the code; Seed fills the overview.
Exit 0 when every flow passed; otherwise the first failure is printed and the exit is 1.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ready
from selenium.webdriver.support.ui import WebDriverWait
from axe_selenium_python import Axe

WAIT_SECONDS = 15
# A page re-renders what it shows after each action (a list read again): an element found
# a moment before may be gone when it is read or clicked. Waits look again instead.
RETRIED = (NoSuchElementException, StaleElementReferenceException)


def browser():
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1280,900", "--no-first-run", "--disable-extensions"):
        options.add_argument(flag)
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    service = Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(WAIT_SECONDS)
    return driver


class Console:
    def __init__(self, driver, url, screenshots):
        self.driver, self.url, self.screenshots = driver, url.rstrip("/"), screenshots
        self.wait = WebDriverWait(driver, WAIT_SECONDS, ignored_exceptions=RETRIED)

    def open(self, page="overview"):
        self.driver.get(f"{self.url}/console#/{page}")

    def go(self, page):
        self.driver.execute_script("location.hash = arguments[0]", f"#/{page}")

    def heading(self, text):
        self.wait.until(ready.text_to_be_present_in_element((By.CSS_SELECTOR, "main h1"), text))

    def text(self, fragment):
        self.wait.until(lambda d: fragment in d.find_element(By.TAG_NAME, "main").text)

    def fill(self, label, value):
        def typed(driver):
            field = driver.find_element(By.XPATH, f"//main//label[normalize-space()='{label}']")
            target = driver.find_element(By.ID, field.get_attribute("for"))
            target.clear()
            target.send_keys(value)
            return target
        return self.wait.until(typed)

    def press(self, label, within=None):
        """Clicks the button of that label (in `within`, else anywhere on the page)."""
        def clicked(driver):
            scope = within or driver.find_element(By.TAG_NAME, "main")
            button = next((b for b in scope.find_elements(By.TAG_NAME, "button") if b.text.strip() == label), None)
            if button is None:
                return False
            button.click()
            return True
        self.wait.until(clicked)

    def sign_in(self, email, code_for):
        self.heading("Sign in")
        self.fill("Email", email).send_keys(Keys.ENTER)
        self.heading("Enter the code")
        self.fill("Code", code_for(email)).send_keys(Keys.ENTER)

    def check(self, name):
        """axe-core on the page as it is, then a screenshot at both widths."""
        axe = Axe(self.driver)
        axe.inject()
        results = axe.run()
        serious = [v for v in results["violations"] if v.get("impact") in ("serious", "critical")]
        if serious:
            raise AssertionError(f"axe on {name}: " + json.dumps(
                [{"id": v["id"], "impact": v["impact"], "nodes": [n["target"] for n in v["nodes"]]} for v in serious]))
        for width in (1280, 360):
            self.driver.set_window_size(width, 900)
            time.sleep(0.2)  # a resize is not an event to wait on; only the picture depends on it
            self.driver.save_screenshot(os.path.join(self.screenshots, f"{name}-{width}.png"))
        self.driver.set_window_size(1280, 900)


def outbox_code(conninfo):
    def code(email):
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            # On standard input: psql interpolates :'email' (quoted) there, not in -c.
            body = subprocess.run(
                ["psql", conninfo, "-At", "-v", f"email={email}"],
                input="SELECT body FROM outbox WHERE recipient = :'email' ORDER BY created_at DESC, id DESC LIMIT 1;\n",
                capture_output=True, text=True, check=True).stdout
            found = re.search(r"\b\d{6}\b", body)
            if found:
                return found.group(0)
            time.sleep(0.1)  # polling the outbox for a row a request writes: bounded above
        raise AssertionError(f"no code for {email} in the outbox")
    return code


def production(args):
    driver = browser()
    try:
        console = Console(driver, args.url, args.screenshots)
        code = outbox_code(args.conninfo)

        # A plain user is told they may not, and shown nothing. (The sign-in page first.)
        console.open()
        console.heading("Sign in")
        console.check("sign-in")
        console.sign_in(args.user, code)
        console.heading("Not allowed")
        if "Overview" in driver.find_element(By.ID, "nav").text:
            raise AssertionError("a plain user sees the moderators' pages")
        console.check("not-allowed")

        # A reload forgets the token: the moderator signs in afresh.
        driver.refresh()
        console.sign_in(args.moderator, code)
        console.heading("Overview")
        console.text("Totals")
        console.check("overview")

        # The open report, its post as a reader sees it; removed with a note.
        console.go("reports")
        console.heading("Reports")
        console.text("Report for the console")
        console.check("reports")
        note = console.wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "li.report label").text)
        console.fill(note, "removed in the browser test")
        console.press("Remove")  # the one open report's
        console.text("No open reports.")

        # Suspend the user, then unsuspend them.
        console.go("users")
        console.heading("Users")
        console.fill("Email, username or id", args.suspect_id).send_keys(Keys.ENTER)
        console.text("Suspended")
        console.check("users")
        console.press("Suspend")
        console.wait.until(lambda d: any(b.text == "Unsuspend" for b in d.find_elements(By.TAG_NAME, "button")))
        console.press("Unsuspend")
        console.wait.until(lambda d: any(b.text == "Suspend" for b in d.find_elements(By.TAG_NAME, "button")))

        # The log has all three.
        console.go("log")
        console.heading("Log")
        console.text("removed in the browser test")
        console.check("log")
        log = driver.find_element(By.TAG_NAME, "main").text
        for action in ("suspend", "unsuspend", "remove"):
            if action not in log:
                raise AssertionError(f"the log lacks {action}: {log}")
    finally:
        driver.quit()


def trust(args):
    driver = browser()
    try:
        console = Console(driver, args.url, args.screenshots)
        email = "dev-moderator@example.com"
        # The code just requested shows in the mailbox page, which needs no sign-in.
        console.open()
        console.heading("Sign in")
        console.fill("Email", email).send_keys(Keys.ENTER)
        console.heading("Enter the code")
        driver.find_element(By.LINK_TEXT, "mailbox").click()
        console.heading("Mailbox")
        console.text("sign-in code")
        console.check("mailbox")
        code = re.search(r"\b\d{6}\b", driver.find_element(By.TAG_NAME, "main").text).group(0)
        console.go("overview")
        console.sign_in(email, lambda _: code)
        console.heading("Overview")

        # Seed, then the overview counts what it made.
        console.go("seed")
        console.heading("Seed and reset")
        console.check("seed")
        console.fill("Users", "5")
        console.fill("Posts", "20")
        console.press("Seed")
        console.text("Seeded 5 users, 20 posts")
        console.go("overview")
        console.heading("Overview")
        console.wait.until(lambda d: re.search(r"posts\s+20\s+20", d.find_element(By.TAG_NAME, "main").text))

        console.go("events")
        console.heading("Live events")
        console.check("events")

        # The keyboard alone: the first stop skips to the page, then the pages in order;
        # Enter on one opens it.
        console.open("overview")
        console.heading("Overview")
        body = driver.find_element(By.TAG_NAME, "body")
        body.send_keys(Keys.TAB)
        if driver.switch_to.active_element.text != "Skip to the page":
            raise AssertionError(f"the first tab stop is {driver.switch_to.active_element.text!r}")
        for _ in range(10):
            driver.switch_to.active_element.send_keys(Keys.TAB)
            if driver.switch_to.active_element.text == "Log":
                break
        else:
            raise AssertionError("Tab never reached the Log page's link")
        driver.switch_to.active_element.send_keys(Keys.ENTER)
        console.heading("Log")
    finally:
        driver.quit()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("production", "trust"))
    parser.add_argument("--url", required=True)
    parser.add_argument("--screenshots", required=True)
    parser.add_argument("--conninfo")
    parser.add_argument("--moderator")
    parser.add_argument("--user")
    parser.add_argument("--suspect-id")
    args = parser.parse_args()
    os.makedirs(args.screenshots, exist_ok=True)
    try:
        (production if args.mode == "production" else trust)(args)
    except Exception as error:  # the Swift test shows this and fails
        print(f"console flow failed: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
