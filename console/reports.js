// Reports: the open queue, each target as a reader sees it, and what a moderator may do
// with it (dismiss, remove the post or comment, suspend its author), with a note.
import { h, status, field, when } from './dom.js';

function target(report) {
  const t = report.target || {};
  if (t.type === 'post' && t.post) {
    return h('article', { class: 'target' }, h('h3', {}, t.post.title || '(no title)'),
      h('p', {}, t.post.summary || ''), h('p', {}, t.post.body || ''),
      h('p', { class: 'meta' }, `Post ${t.post.id} by ${t.post.author_name ?? t.post.user_id}`));
  }
  if (t.type === 'comment' && t.comment) {
    return h('article', { class: 'target' }, h('p', {}, t.comment.body || ''),
      h('p', { class: 'meta' }, `Comment by ${t.comment.profile?.username ?? t.comment.user_id}`));
  }
  if (t.type === 'user' && t.profile) {
    return h('article', { class: 'target' }, h('h3', {}, t.profile.username),
      h('p', {}, t.profile.full_name || ''), h('p', {}, t.profile.bio || ''));
  }
  return h('p', { class: 'meta' }, `${t.type ?? 'target'} no longer there`);
}

function card(report, context) {
  const note = h('textarea', { name: 'note', rows: '2', maxlength: '1000' });
  const message = h('div', { 'aria-live': 'polite' });
  const act = (action) => async () => {
    try {
      await context.post(`/api/moderation/reports/${report.id}/resolve`, { action, note: note.value || undefined });
      await reports(context);
    } catch (error) {
      message.replaceChildren(status(error.message, 'error'));
    }
  };
  return h('li', { class: 'report' },
    h('h2', {}, `Report ${report.id}: ${report.reason}`),
    h('p', { class: 'meta' }, `By ${report.reporter?.username ?? 'someone'}, ${when(report.created_at)}`,
      report.reports_on_target > 1 ? ` (${report.reports_on_target} reports on this)` : ''),
    report.details ? h('blockquote', {}, report.details) : null,
    target(report),
    field(`Note for report ${report.id}`, note),
    h('div', { class: 'actions' },
      h('button', { type: 'button', onclick: act('dismiss') }, 'Dismiss'),
      report.target?.type === 'user' ? null : h('button', { type: 'button', onclick: act('remove') }, 'Remove'),
      h('button', { type: 'button', class: 'danger', onclick: act('suspend') }, 'Suspend the author')),
    message);
}

export async function reports(context) {
  const { reports: open } = await context.get('/api/moderation/reports?status=open&limit=50');
  context.show(h('h1', {}, 'Reports'),
    open.length ? h('ul', { class: 'reports' }, open.map((report) => card(report, context)))
      : status('No open reports.'));
}
