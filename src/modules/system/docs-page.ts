/**
 * Renders the API reference page from the OpenAPI document, server side and self-contained
 * (no script or stylesheet from elsewhere: the page works offline and under a strict CSP).
 */
type Json = Record<string, any>;

const escape = (value: unknown) =>
  String(value).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function resolve(doc: Json, schema: Json | undefined): Json | undefined {
  if (!schema?.$ref) return schema;
  const name = String(schema.$ref).split('/').pop()!;
  return doc.components?.schemas?.[name];
}

function schemaText(doc: Json, schema: Json | undefined, depth = 0): string {
  schema = resolve(doc, schema);
  if (!schema) return 'any';
  if (depth > 6) return '…';
  const pad = '  '.repeat(depth + 1);
  if (schema.anyOf || schema.oneOf) {
    return (schema.anyOf ?? schema.oneOf).map((s: Json) => schemaText(doc, s, depth)).join(' | ');
  }
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) return schema.enum.map((v: unknown) => JSON.stringify(v)).join(' | ');
  if (schema.type === 'array') return `array of ${schemaText(doc, schema.items, depth)}`;
  if (schema.type === 'object' || schema.properties) {
    const required = new Set<string>(schema.required ?? []);
    const lines = Object.entries<Json>(schema.properties ?? {}).map(([name, prop]) => {
      const limits = [
        prop.minLength !== undefined && `min length ${prop.minLength}`,
        prop.maxLength !== undefined && `max length ${prop.maxLength}`,
        prop.minimum !== undefined && `min ${prop.minimum}`,
        prop.maximum !== undefined && `max ${prop.maximum}`,
        prop.pattern && `pattern ${prop.pattern}`,
        prop.format && prop.format,
        prop.default !== undefined && `default ${JSON.stringify(prop.default)}`,
      ].filter(Boolean);
      const note = [limits.join(', '), prop.description].filter(Boolean).join('; ');
      return `${pad}${name}${required.has(name) ? '' : '?'}: ${schemaText(doc, prop, depth + 1)}${note ? `  // ${note}` : ''}`;
    });
    return lines.length ? `{\n${lines.join('\n')}\n${'  '.repeat(depth)}}` : 'object';
  }
  return schema.type ?? 'any';
}

export function renderDocsPage(doc: Json): string {
  const sections = new Map<string, string[]>();
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<Json>(item)) {
      const tag = op.tags?.[0] ?? 'Other';
      const params = (op.parameters ?? [])
        .map((p: Json) => `<li><code>${escape(p.name)}</code> (${escape(p.in)}${p.required ? ', required' : ''}) ${escape(p.description ?? '')} <code>${escape(schemaText(doc, p.schema))}</code></li>`)
        .join('');
      const body = op.requestBody?.content
        ? Object.entries<Json>(op.requestBody.content)
            .map(([type, c]) => `<h4>Body <code>${escape(type)}</code></h4><pre>${escape(schemaText(doc, c.schema))}</pre>`)
            .join('')
        : '';
      const responses = Object.entries<Json>(op.responses ?? {})
        .map(([status, r]) => {
          const content = r.content ? (Object.values<Json>(r.content)[0]?.schema as Json | undefined) : undefined;
          return `<details><summary><b>${escape(status)}</b> ${escape(r.description ?? '')}</summary>${content ? `<pre>${escape(schemaText(doc, content))}</pre>` : ''}</details>`;
        })
        .join('');
      const auth = op.security ? 'X-API-Key or Authorization: Bearer' : 'none';
      const html = `<section id="${escape(method + path)}"><h3><span class="m ${escape(method)}">${escape(method.toUpperCase())}</span> <code>${escape(path)}</code></h3>
<p>${escape(op.summary ?? '')}</p><p class="auth">Credentials: ${escape(auth)}</p>${params ? `<h4>Parameters</h4><ul>${params}</ul>` : ''}${body}<h4>Responses</h4>${responses}</section>`;
      if (!sections.has(tag)) sections.set(tag, []);
      sections.get(tag)!.push(html);
    }
  }
  const nav = [...sections.keys()].map((tag) => `<a href="#tag-${escape(tag)}">${escape(tag)}</a>`).join(' · ');
  const content = [...sections.entries()].map(([tag, ops]) => `<h2 id="tag-${escape(tag)}">${escape(tag)}</h2>${ops.join('')}`).join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(doc.info?.title)} API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#1b1f24}
code,pre{font-family:ui-monospace,monospace;font-size:13px}pre{background:#f5f7f9;padding:.75rem;overflow:auto;border-radius:6px}
section{border-top:1px solid #e3e7eb;padding:.5rem 0}.m{display:inline-block;min-width:4.5em;text-align:center;border-radius:4px;color:#fff;font-size:12px;padding:2px 6px}
.get{background:#2f7d4f}.post{background:#1f5fa8}.patch{background:#8a5a00}.put{background:#6b3fa0}.delete{background:#a8321f}.auth{color:#57606a}</style></head>
<body><h1>${escape(doc.info?.title)} API reference</h1><p>${escape(doc.info?.description ?? '')}</p>
<p>Machine-readable: <a href="/api/openapi.json">/api/openapi.json</a> (OpenAPI ${escape(doc.openapi)}).</p><nav>${nav}</nav>${content}</body></html>`;
}
