import { useEffect } from 'react';
import { ActionIcon, AppShell, Badge, Burger, Button, Divider, Group, NavLink, Select, Stack, Text, Title, useComputedColorScheme, useMantineColorScheme } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { Link, Outlet, useLocation, useNavigate } from 'react-router';
import { selectOrganization, signOut } from '../auth/credentials.ts';
import { useCredentials } from '../auth/useCredentials.ts';
import { atLeast, useMe, type Role } from '../hooks/useMe.ts';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { useOnboarding } from '../pages/overview/onboarding.ts';

const PAGES: Array<{ to: string; label: string; role?: Role }> = [
  { to: '/', label: 'Get started' },
  { to: '/calls', label: 'Calls' },
  { to: '/analytics', label: 'Analytics' },
  { to: '/usage', label: 'Usage' },
  { to: '/agents', label: 'Agents' },
  { to: '/knowledge-base', label: 'Knowledge base' },
  { to: '/phone-numbers', label: 'Phone numbers' },
  { to: '/integrations', label: 'Integrations' },
  { to: '/tools', label: 'Tools' },
  { to: '/api-keys', label: 'API keys' },
  { to: '/campaigns', label: 'Campaigns' },
  { to: '/webhooks', label: 'Webhooks', role: 'agent_manager' as const },
  { to: '/team', label: 'Team' },
  { to: '/billing', label: 'Billing' },
];

/** The frame of every signed-in page: navigation, organization switching, who is signed in. */
export function Shell() {
  const [opened, { toggle, close }] = useDisclosure();
  const { credentials, orgId } = useCredentials();
  const { me, role, error } = useMe();
  const location = useLocation();
  const navigate = useNavigate();

  // A signed-in person acts in one of their organizations: the first, until they choose.
  useEffect(() => {
    if (credentials.kind !== 'session' || !me) return;
    if (!me.organizations.some((o) => o.organization_id === orgId) && me.organizations[0]) selectOrganization(me.organizations[0].organization_id);
  }, [credentials.kind, me, orgId]);

  const organizations = me?.organizations.map((o) => ({ value: o.organization_id, label: o.name })) ?? [];
  const { steps, doneCount } = useOnboarding(false);
  const switcher = (width: number | string) => (credentials.kind === 'session' && organizations.length > 0 ? (
    <Select aria-label="Organization" data={organizations} value={orgId} allowDeselect={false} w={width} comboboxProps={{ withinPortal: true }}
      onChange={(value) => { if (value) { close(); selectOrganization(value); navigate('/calls'); } }} />
  ) : (
    <Text size="sm" c="dimmed">{orgId}</Text>
  ));
  const who = <Text size="sm">{credentials.kind === 'session' ? credentials.email : 'API key'}{role ? ` · ${role}` : ''}</Text>;
  const signOutButton = <Button variant="default" size="xs" onClick={() => void signOut().then(() => navigate('/sign-in'))}>Sign out</Button>;
  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !opened } }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label={opened ? 'Close the menu' : 'Open the menu'} aria-expanded={opened} />
            <Title order={2} size="h4">Switchboard</Title>
          </Group>
          <Group wrap="nowrap" gap="sm">
            <Group wrap="nowrap" gap="sm" visibleFrom="sm">{switcher(200)}</Group>
            <Group visibleFrom="md">{who}</Group>
            <ColorSchemeToggle />
            <Group visibleFrom="sm">{signOutButton}</Group>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" component="nav" aria-label="Pages">
        {/* On a phone the header has no room: the organization, who is signed in and sign-out live in the drawer. */}
        <Stack hiddenFrom="sm" gap="xs" mb="sm" data-testid="drawer-account">
          {switcher('100%')}
          {who}
          {signOutButton}
          <Divider />
        </Stack>
        {PAGES.filter((page) => !page.role || atLeast(role, page.role)).map((page) => (
          <NavLink key={page.to} component={Link} to={page.to} label={page.label} onClick={close}
            rightSection={page.to === '/' && doneCount < steps.length ? <Badge size="sm" variant="light" aria-label={`${doneCount} of ${steps.length} setup steps done`}>{doneCount}/{steps.length}</Badge> : undefined}
            active={page.to === '/' ? location.pathname === '/' : location.pathname.startsWith(page.to)} />
        ))}
      </AppShell.Navbar>
      <AppShell.Main>
        <ErrorAlert error={error} title="Who you are could not be loaded" />
        {orgId ? <Outlet key={orgId} /> : null}
      </AppShell.Main>
    </AppShell>
  );
}

/** Light or dark: follows the system (prefers-color-scheme) until chosen here; the choice is kept in this browser. */
function ColorSchemeToggle() {
  const { setColorScheme } = useMantineColorScheme();
  const computed = useComputedColorScheme('light');
  const other = computed === 'dark' ? 'light' : 'dark';
  return (
    <ActionIcon variant="default" size="lg" aria-label={`Use ${other} mode`} title={`Use ${other} mode`} onClick={() => setColorScheme(other)}>
      <span aria-hidden>{computed === 'dark' ? '☀' : '☾'}</span>
    </ActionIcon>
  );
}
