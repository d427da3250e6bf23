import { useEffect, useState } from 'react';
import { Anchor, Button, Center, Paper, PasswordInput, Stack, Tabs, Text, TextInput, Title } from '@mantine/core';
import { useLocation, useNavigate, useSearchParams } from 'react-router';
import { api, unwrap } from '../api/client.ts';
import { setSession, signInWithKey, signedOut } from '../auth/credentials.ts';
import { ErrorAlert } from '../components/ErrorAlert.tsx';

/** A link's token is single use: redeemed once per page load, whatever React re-runs. */
const redeeming = new Map<string, Promise<void>>();
function redeem(token: string): Promise<void> {
  if (!redeeming.has(token)) {
    redeeming.set(token, unwrap(api.POST('/api/auth/session', { body: { token } })).then((res) => setSession(res.data)));
  }
  return redeeming.get(token)!;
}

export function SignInPage() {
  const [params] = useSearchParams();
  const token = params.get('token');
  const navigate = useNavigate();
  const from = (useLocation().state as { from?: string } | null)?.from ?? '/calls';
  const [redeemError, setRedeemError] = useState<unknown>(null);

  useEffect(() => {
    if (!token) return;
    redeem(token).then(() => navigate(from, { replace: true }), setRedeemError);
  }, [token, from, navigate]);

  return (
    <Center mih="100vh" p="md" component="main">
      <Paper withBorder shadow="sm" p="xl" w={420} maw="100%">
        <Stack>
          <Title order={1} size="h2">Sign in to Switchboard</Title>
          {token && !redeemError ? <Text>Signing you in…</Text> : null}
          <ErrorAlert error={redeemError} title="This sign-in link cannot be used" />
          {!token || redeemError ? <SignInForms onKey={() => navigate(from, { replace: true })} /> : null}
        </Stack>
      </Paper>
    </Center>
  );
}

function SignInForms({ onKey }: { onKey: () => void }) {
  return (
    <Tabs defaultValue="email">
      <Tabs.List>
        <Tabs.Tab value="email">E-mail link</Tabs.Tab>
        <Tabs.Tab value="key">API key</Tabs.Tab>
      </Tabs.List>
      <Tabs.Panel value="email" pt="md"><EmailLinkForm /></Tabs.Panel>
      <Tabs.Panel value="key" pt="md"><ApiKeyForm onDone={onKey} /></Tabs.Panel>
    </Tabs>
  );
}

function EmailLinkForm() {
  const [email, setEmail] = useState('');
  const [state, setState] = useState<{ sent?: string; error?: unknown; busy?: boolean }>({});
  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    setState({ busy: true });
    try {
      const res = await unwrap(api.POST('/api/auth/sign-in-links', { body: { email } }));
      setState({ sent: res.message ?? 'Check your inbox' });
    } catch (error) {
      setState({ error });
    }
  };
  return (
    <form onSubmit={submit}>
      <Stack>
        <TextInput label="E-mail address" type="email" required autoComplete="email" value={email} onChange={(e) => setEmail(e.currentTarget.value)} />
        <Button type="submit" loading={state.busy}>E-mail me a sign-in link</Button>
        {state.sent ? <Text role="status">{state.sent}.</Text> : null}
        <ErrorAlert error={state.error} />
        <Text size="sm" c="dimmed">The link works once, within 15 minutes. On a first run the server prints one for the admin.</Text>
      </Stack>
    </form>
  );
}

function ApiKeyForm({ onDone }: { onDone: () => void }) {
  const [key, setKey] = useState('');
  const [org, setOrg] = useState('');
  const [state, setState] = useState<{ error?: unknown; busy?: boolean }>({});
  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    setState({ busy: true });
    signInWithKey(key.trim(), org.trim());
    try {
      await unwrap(api.GET('/api/auth/me'));
      onDone();
    } catch (error) {
      signedOut();
      setState({ error });
    }
  };
  return (
    <form onSubmit={submit}>
      <Stack>
        <PasswordInput label="API key" required autoComplete="off" value={key} onChange={(e) => setKey(e.currentTarget.value)} />
        <TextInput label="Organization id" required autoComplete="off" value={org} onChange={(e) => setOrg(e.currentTarget.value)} />
        <Button type="submit" loading={state.busy}>Use this key</Button>
        <ErrorAlert error={state.error} />
        <Text size="sm" c="dimmed">Kept for this tab only. <Anchor href="/api/docs">API reference</Anchor></Text>
      </Stack>
    </form>
  );
}
