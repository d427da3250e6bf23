/** The local provider's hosted checkout page: plain HTML, every value escaped. */
const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem;color:#1f2933}
dl{display:grid;grid-template-columns:auto 1fr;gap:.4rem 1rem}dt{color:#616e7c}button{font-size:1rem;padding:.6rem 1.4rem;margin-right:.6rem}
.note{color:#616e7c;font-size:.9rem}</style></head><body>${body}</body></html>`;
}

export function checkoutPage(view: { sessionId: string; organization: string; amountDollars: number; credits: number; status: string; expiresAt: Date }): string {
  const details = `<dl><dt>Organization</dt><dd>${escapeHtml(view.organization)}</dd>
<dt>Amount</dt><dd>$${view.amountDollars.toLocaleString('en-US')}.00</dd>
<dt>Credits</dt><dd>${view.credits.toLocaleString('en-US')}</dd>
<dt>Session</dt><dd>${escapeHtml(view.sessionId)}</dd></dl>`;
  if (view.status !== 'open') {
    return page('Checkout', `<h1>Checkout ${escapeHtml(view.status)}</h1>${details}<p class="note">This checkout session can no longer be paid.</p>`);
  }
  const action = `/api/billing/checkout/${encodeURIComponent(view.sessionId)}`;
  return page('Checkout', `<h1>Buy credits</h1>${details}
<form method="post" action="${action}/pay" style="display:inline"><button type="submit">Pay</button></form>
<form method="post" action="${action}/cancel" style="display:inline"><button type="submit">Cancel</button></form>
<p class="note">Local payment provider: no money moves. The session expires ${escapeHtml(view.expiresAt.toISOString())}.</p>`);
}

export function resultPage(title: string, message: string, link?: { href: string; text: string }): string {
  return page(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>${link ? `<p><a href="${escapeHtml(link.href)}">${escapeHtml(link.text)}</a></p>` : ''}`);
}
