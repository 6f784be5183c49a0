// The console's shell: signing in with an emailed code, the pages by `#/name`, and who may
// see them (moderators and admins; anyone else is told so and shown nothing).
import { api, get, post, put, remove, setToken, signedIn, APIError } from './api.js';
import { h, show, status, field } from './dom.js';
import { overview } from './overview.js';
import { reports } from './reports.js';
import { users } from './users.js';
import { log } from './log.js';
import { mailbox, seed, events } from './dev.js';
import { snapshots, clock, faults } from './testing.js';
import { domains } from './domains.js';

const pages = [
  { path: 'overview', title: 'Overview', render: overview },
  { path: 'reports', title: 'Reports', render: reports },
  { path: 'users', title: 'Users', render: users },
  { path: 'log', title: 'Log', render: log },
  { path: 'domains', title: 'Domains', render: domains },
  { path: 'mailbox', title: 'Mailbox', render: mailbox, dev: true, open: true },
  { path: 'seed', title: 'Seed and reset', render: seed, dev: true },
  { path: 'events', title: 'Live events', render: events, dev: true },
  { path: 'snapshots', title: 'Snapshots', render: snapshots, dev: true },
  { path: 'clock', title: 'Clock', render: clock, dev: true },
  { path: 'faults', title: 'Faults', render: faults, dev: true },
];

const state = { dev: false, me: null, email: '' };

function allowed(me) { return me && (me.user.role === 'moderator' || me.user.role === 'admin'); }

function visiblePages() {
  return pages.filter((page) => (!page.dev || state.dev) && (allowed(state.me) || page.open));
}

function renderNav(current) {
  const links = visiblePages().map((page) => h('a', {
    href: `#/${page.path}`, 'aria-current': page.path === current ? 'page' : null,
  }, page.title));
  document.getElementById('nav').replaceChildren(...links);
  const who = document.getElementById('who');
  who.replaceChildren(...(state.me ? [h('span', {}, state.me.user.email), ' ',
    h('button', { type: 'button', onclick: signOut }, 'Sign out')] : []));
}

async function signOut() {
  try { await post('/api/auth/logout'); } catch { /* the token is forgotten either way */ }
  setToken(null);
  state.me = null;
  location.hash = '#/overview';
  route();
}

function signInForm(next) {
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'email', required: true, value: state.email });
  const message = h('div', { 'aria-live': 'polite' });
  const form = h('form', {
    onsubmit: async (event) => {
      event.preventDefault();
      state.email = email.value.trim();
      try {
        await post('/api/auth/send-code', { email: state.email });
        show(codeForm(next));
      } catch (error) {
        message.replaceChildren(status(error.message, 'error'));
      }
    },
  }, h('h1', {}, 'Sign in'), h('p', {}, 'A code will be sent to this address.'),
  field('Email', email), h('button', { type: 'submit' }, 'Send the code'), message);
  return form;
}

function codeForm(next) {
  const code = h('input', { type: 'text', name: 'code', inputmode: 'numeric', autocomplete: 'one-time-code', required: true });
  const message = h('div', { 'aria-live': 'polite' });
  const mailboxLink = state.dev
    ? h('p', {}, 'Development server: the code is in the ', h('a', { href: '#/mailbox' }, 'mailbox'), '.')
    : null;
  return h('form', {
    onsubmit: async (event) => {
      event.preventDefault();
      try {
        const answer = await post('/api/auth/verify-code', { email: state.email, code: code.value.trim() });
        setToken(answer.token);
        state.me = await get('/api/me');
        next();
      } catch (error) {
        message.replaceChildren(status(error.message, 'error'));
      }
    },
  }, h('h1', {}, 'Enter the code'), h('p', {}, `Sent to ${state.email}.`), mailboxLink,
  field('Code', code), h('button', { type: 'submit' }, 'Sign in'), message);
}

// Each visit of a page is one turn: a page still loading when another is opened must not
// draw over it when its answers come. `main` is `aria-busy` until the turn's page is drawn
// and focused (what a screen reader waits for, and what the browser tests wait for).
let turn = 0;

async function route() {
  const mine = ++turn;
  const current = () => mine === turn;
  const main = document.getElementById('main');
  main.setAttribute('aria-busy', 'true');
  const path = (location.hash.replace(/^#\/?/, '') || 'overview').split('?')[0];
  const page = pages.find((candidate) => candidate.path === path && (!candidate.dev || state.dev)) || pages[0];
  renderNav(page.path);
  document.title = `${page.title} · posts-server console`;
  try {
    await draw(page, (...children) => { if (current()) show(...children); });
  } finally {
    if (current()) {
      main.removeAttribute('aria-busy');
      main.focus();
    }
  }
}

async function draw(page, showNow) {
  if (!page.open && !signedIn()) {
    showNow(signInForm(route));
    return;
  }
  if (!page.open && !allowed(state.me)) {
    showNow(h('h1', {}, 'Not allowed'),
      h('p', { role: 'alert' }, `${state.me.user.email} may not use the console: it is for moderators and admins.`));
    return;
  }
  showNow(h('h1', {}, page.title), status('Loading…'));
  try {
    await page.render({ api, get, post, put, remove, state, show: showNow });
  } catch (error) {
    const message = error instanceof APIError && error.status === 401 ? 'Your session ended: sign in again.' : error.message;
    if (error instanceof APIError && error.status === 401) { setToken(null); state.me = null; }
    showNow(h('h1', {}, page.title), status(message, 'error'));
  }
}

async function start() {
  try {
    const instance = await get('/api/instance');
    state.dev = (instance.features || []).includes('dev');
  } catch { /* an older server: no dev pages */ }
  window.addEventListener('hashchange', route);
  await route();
}

start();
