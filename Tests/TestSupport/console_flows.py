"""The console in a real browser (headless Chromium from Debian, driven by Selenium), run
by ConsoleBrowserTests against a server the Swift test started. Each flow is what a person
does; axe-core checks every page it reaches (no serious or critical violation), and a
screenshot of each page is saved at 1280 and 360 px wide.

    python console_flows.py production --url URL --conninfo CONNINFO --screenshots DIR \
        --moderator EMAIL --user EMAIL --suspect-id ID --suspect-device NAME
    python console_flows.py trust --url URL --screenshots DIR

`production`: token mode. Codes are read from the outbox with psql (no mail server: the
message waits there). `trust`: the dev mailbox shows the code; Seed fills the overview;
snapshots, the clock and faults work from their pages; an admin blocks and lifts a domain.
Exit 0 when every flow passed; otherwise the first failure is printed and the exit is 1.

Every check waits (bounded, WAIT_SECONDS) for the state it checks, never for a time: the
console marks `main` and each section that is still loading `aria-busy`, and a page is
checked once nothing is busy. A busy machine makes a flow slower, not wrong; and the
browser's network is slowed on purpose (LATENCY_MS), so that a check that would race the
page's drawing fails every run instead of once under load.
"""
import argparse
import json
import os
import re
import subprocess
import sys

from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ready
from selenium.webdriver.support.ui import WebDriverWait
from axe_selenium_python import Axe

# The bound of every wait: generous, for a loaded machine; a passing run never waits it out.
WAIT_SECONDS = 30
# Added to every request the browser makes (Chromium's network emulation), in milliseconds.
LATENCY_MS = 300
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
    # Every answer arrives late, as on a busy machine: a check that looks before the page is
    # drawn fails on every run here, not once in a while under load.
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.emulateNetworkConditions", {
        "offline": False, "latency": LATENCY_MS, "downloadThroughput": -1, "uploadThroughput": -1})
    return driver


class Console:
    def __init__(self, driver, url, screenshots):
        self.driver, self.url, self.screenshots = driver, url.rstrip("/"), screenshots
        self.wait = WebDriverWait(driver, WAIT_SECONDS, ignored_exceptions=RETRIED)

    def open(self, page="overview"):
        self.driver.get(f"{self.url}/console#/{page}")

    def go(self, page):
        self.driver.execute_script("location.hash = arguments[0]", f"#/{page}")

    def until(self, condition, what):
        """Waits for `condition`; on time out, says which state never came."""
        try:
            return self.wait.until(condition)
        except TimeoutException:
            raise AssertionError(f"after {WAIT_SECONDS} s, still not {what}") from None

    @staticmethod
    def settled(driver):
        """Nothing is loading: the page is drawn and focused (app.js clears `main`'s
        aria-busy last) and every section has its answer."""
        return not driver.find_elements(By.CSS_SELECTOR, "[aria-busy='true']")

    def heading(self, text):
        self.until(lambda d: text in d.find_element(By.CSS_SELECTOR, "main h1").text and self.settled(d),
                   f"on the page {text!r}")

    def text(self, fragment):
        self.until(lambda d: fragment in d.find_element(By.TAG_NAME, "main").text and self.settled(d),
                   f"showing {fragment!r}")

    def fill(self, label, value):
        def typed(driver):
            field = driver.find_element(By.XPATH, f"//main//label[normalize-space()='{label}']")
            target = driver.find_element(By.ID, field.get_attribute("for"))
            target.clear()
            target.send_keys(value)
            return target
        return self.until(typed, f"able to fill {label!r}")

    def button(self, label):
        """Waits for a button of that label on the settled page."""
        self.until(lambda d: self.settled(d) and any(b.text.strip() == label for b in d.find_elements(By.TAG_NAME, "button")),
                   f"showing a button {label!r}")

    def press(self, label, within=None):
        """Clicks the button of that label (in `within`, else anywhere on the page)."""
        def clicked(driver):
            scope = within or driver.find_element(By.TAG_NAME, "main")
            button = next((b for b in scope.find_elements(By.TAG_NAME, "button") if b.text.strip() == label), None)
            if button is None:
                return False
            button.click()
            return True
        self.until(clicked, f"able to press {label!r}")

    def focused(self, text):
        """Waits for the keyboard focus to be on the element showing `text`."""
        try:
            self.wait.until(lambda d: d.switch_to.active_element.text == text)
        except TimeoutException:
            raise AssertionError(f"the focus is on {self.driver.switch_to.active_element.text!r}, not {text!r}") from None

    def tab(self):
        """One Tab, and the focus moved on (the keyboard's answer is an event like any other)."""
        before = self.driver.switch_to.active_element
        before.send_keys(Keys.TAB)
        self.until(lambda d: d.switch_to.active_element != before, "moved on by Tab")
        return self.driver.switch_to.active_element

    def section(self, title):
        """The text of the first person's section whose heading begins with `title`."""
        return self.driver.find_element(
            By.XPATH, f"(//main//li[contains(@class,'person')])[1]//section[h3[starts-with(normalize-space(),'{title}')]]").text

    def in_section(self, title, fragments):
        self.until(lambda d: self.settled(d) and all(f in self.section(title) for f in fragments),
                   f"listing {fragments!r} under {title!r}")

    def sign_in(self, email, code_for):
        self.heading("Sign in")
        self.fill("Email", email).send_keys(Keys.ENTER)
        self.heading("Enter the code")
        self.fill("Code", code_for(email)).send_keys(Keys.ENTER)

    def resize(self, width):
        self.driver.set_window_size(width, 900)
        self.until(lambda d: d.execute_script("return window.innerWidth") == width, f"{width} px wide")

    def check(self, name):
        """axe-core on the page once it is settled, then a screenshot at both widths."""
        self.until(self.settled, f"done loading {name}")
        axe = Axe(self.driver)
        axe.inject()
        results = axe.run()
        serious = [v for v in results["violations"] if v.get("impact") in ("serious", "critical")]
        if serious:
            raise AssertionError(f"axe on {name}: " + json.dumps(
                [{"id": v["id"], "impact": v["impact"], "nodes": [n["target"] for n in v["nodes"]]} for v in serious]))
        for width in (1280, 360):
            self.resize(width)
            self.driver.save_screenshot(os.path.join(self.screenshots, f"{name}-{width}.png"))
        self.resize(1280)


def outbox_code(conninfo):
    def code(email):
        def found(_):
            # On standard input: psql interpolates :'email' (quoted) there, not in -c.
            body = subprocess.run(
                ["psql", conninfo, "-At", "-v", f"email={email}"],
                input="SELECT body FROM outbox WHERE recipient = :'email' ORDER BY created_at DESC, id DESC LIMIT 1;\n",
                capture_output=True, text=True, check=True).stdout
            match = re.search(r"\b\d{6}\b", body)
            return match.group(0) if match else False
        try:
            return WebDriverWait(None, WAIT_SECONDS, poll_frequency=0.1).until(found)
        except TimeoutException:
            raise AssertionError(f"no code for {email} in the outbox") from None
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

        # Whom the report is about: their sessions (the device they named) and the open
        # report against them, with its reason, reporter and details.
        console.go("users")
        console.heading("Users")
        console.fill("Email, username or id", args.suspect_id).send_keys(Keys.ENTER)
        console.in_section("Sessions", [args.suspect_device, "Signed in", "Last used"])
        console.in_section("Reports against them (1)", ["spam (open)", "By plain", "Report for the console"])
        console.check("users")

        # The open report, its post as a reader sees it; removed with a note.
        console.go("reports")
        console.heading("Reports")
        console.text("Report for the console")
        console.check("reports")
        note = console.until(lambda d: d.find_element(By.CSS_SELECTOR, "li.report label").text, "showing a note field")
        console.fill(note, "removed in the browser test")
        console.press("Remove")  # the one open report's
        console.text("No open reports.")

        # Suspend the user (which ends their sessions), then unsuspend them.
        console.go("users")
        console.heading("Users")
        console.fill("Email, username or id", args.suspect_id).send_keys(Keys.ENTER)
        console.text("Suspended")
        console.in_section("Sessions", [args.suspect_device])
        console.press("Suspend")
        console.button("Unsuspend")
        console.in_section("Sessions", ["No live sessions."])
        console.press("Unsuspend")
        console.button("Suspend")

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
        console.until(ready.element_to_be_clickable((By.LINK_TEXT, "mailbox")), "showing the mailbox link").click()
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
        console.until(lambda d: re.search(r"posts\s+20\s+20", d.find_element(By.TAG_NAME, "main").text),
                      "counting the 20 posts seeded")

        console.go("events")
        console.heading("Live events")
        console.check("events")

        # An app's test-suite controls: a snapshot saved and restored, the clock moved and
        # put back, a fault added and removed.
        console.go("snapshots")
        console.heading("Snapshots")
        console.fill("Name", "seeded")
        console.press("Save")
        console.text("Saved seeded.")
        console.until(lambda d: "seeded" in d.find_element(By.CSS_SELECTOR, "main table").text, "listing the snapshot")
        console.check("snapshots")
        console.press("Restore")
        console.text("Restored seeded.")

        console.go("clock")
        console.heading("Clock")
        console.text("real time")
        console.fill("Seconds", "3600")
        console.press("Advance")
        console.text("The clock moved.")
        console.text("3600 s from real time")
        console.check("clock")
        console.press("Real time")
        console.text("Back to real time.")

        console.go("faults")
        console.heading("Faults")
        console.text("No faults")
        console.fill("Path", "/api/posts/*/like")
        console.fill("Status", "503")
        console.press("Add the fault")
        console.text("The fault is in force.")
        console.text("any /api/posts/*/like")
        console.check("faults")
        console.press("Remove all")
        console.text("Every fault is removed.")
        console.text("No faults")

        # Federation's domain blocks (an admin's): one blocked with a note, listed, lifted.
        console.go("domains")
        console.heading("Domains")
        console.text("No domain is blocked or silenced.")
        console.fill("Domain", "spam.example")
        console.fill("Note", "bulk spam")
        console.press("Save")
        console.text("Blocked spam.example.")
        console.until(lambda d: "bulk spam" in d.find_element(By.CSS_SELECTOR, "main table").text, "listing the block")
        console.check("domains")
        console.press("Lift")
        console.text("Lifted the block of spam.example.")
        console.text("No domain is blocked or silenced.")

        # The keyboard alone: the first stop skips to the page, then the pages in order;
        # Enter on one opens it. (`heading` waits for the page's own focus on `main`, which
        # comes last: a Tab before it would be taken back.)
        console.open("overview")
        console.heading("Overview")
        driver.find_element(By.TAG_NAME, "body").send_keys(Keys.TAB)
        console.focused("Skip to the page")
        for _ in range(10):
            if console.tab().text == "Log":
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
    parser.add_argument("--suspect-device")
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
