import { Alert, MantineProvider, Modal, Notification, createTheme, localStorageColorSchemeManager, type CSSVariablesResolver } from '@mantine/core';
import { Notifications } from '@mantine/notifications';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { lazy, Suspense, type ComponentType } from 'react';
import { RouterProvider, createBrowserRouter } from 'react-router';
import { PageSkeleton } from './components/Skeletons.tsx';
import { ApiError } from './api/client.ts';
import { AuthGate } from './auth/AuthGate.tsx';
import { SignInPage } from './pages/SignInPage.tsx';
import { Shell } from './layout/Shell.tsx';
import { CallsPage } from './pages/calls/CallsPage.tsx';
import { CallPage } from './pages/call/CallPage.tsx';
import { NotFoundPage } from './pages/NotFoundPage.tsx';

// Shades dark enough for AA contrast (axe): white on blue.8, and dimmed text in gray.7.
const theme = createTheme({
  primaryColor: 'blue',
  primaryShade: 8,
  defaultRadius: 'md',
  // A person who asked their system for less motion gets no transitions (modals, notices, menus).
  respectReducedMotion: true,
  components: {
    // Alert titles in the text color (the light variants' colored titles fall below 4.5:1); modals' close buttons named.
    Alert: Alert.extend({ styles: { title: { color: 'var(--mantine-color-text)' } } }),
    Modal: Modal.extend({ defaultProps: { closeButtonProps: { 'aria-label': 'Close' } } }),
    // The notices' close buttons too (axe: button-name), as a notice may still be up when a page is checked.
    Notification: Notification.extend({ defaultProps: { closeButtonProps: { 'aria-label': 'Close the notice' } } }),
  },
});
// Error text (a field's message, an invalid input's value) dark enough on white, light enough on dark gray.
const contrast: CSSVariablesResolver = () => ({
  variables: {},
  light: { '--mantine-color-dimmed': 'var(--mantine-color-gray-7)', '--mantine-color-error': 'var(--mantine-color-red-9)' },
  dark: { '--mantine-color-dimmed': 'var(--mantine-color-dark-1)', '--mantine-color-error': 'var(--mantine-color-red-4)' },
});

const colorSchemeManager = localStorageColorSchemeManager({ key: 'switchboard-color-scheme' });

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 10_000,
      // A refusal (4xx) will not change by asking again.
      retry: (count, error) => !(error instanceof ApiError && error.status < 500) && count < 2,
    },
  },
});

/** Pages past the first screen load when first opened (their charts, dropzone, forms stay out of the initial bundle). */
function page(load: () => Promise<Record<string, ComponentType>>, name: string) {
  const Page = lazy(async () => ({ default: (await load())[name]! }));
  return <Suspense fallback={<PageSkeleton />}><Page /></Suspense>;
}

const router = createBrowserRouter([
  { path: '/sign-in', element: <SignInPage /> },
  {
    element: <AuthGate><Shell /></AuthGate>,
    children: [
      { index: true, element: page(() => import('./pages/overview/OverviewPage.tsx'), 'OverviewPage') },
      { path: 'calls', element: <CallsPage /> },
      { path: 'calls/:callSid', element: <CallPage /> },
      { path: 'agents', element: page(() => import('./pages/agents/AgentsPage.tsx'), 'AgentsPage') },
      { path: 'agents/:agentId', element: page(() => import('./pages/agents/AgentPage.tsx'), 'AgentPage') },
      { path: 'knowledge-base', element: page(() => import('./pages/knowledge/KnowledgePage.tsx'), 'KnowledgePage') },
      { path: 'phone-numbers', element: page(() => import('./pages/phone-numbers/PhoneNumbersPage.tsx'), 'PhoneNumbersPage') },
      { path: 'integrations', element: page(() => import('./pages/integrations/IntegrationsPage.tsx'), 'IntegrationsPage') },
      { path: 'tools', element: page(() => import('./pages/tools/ToolsPage.tsx'), 'ToolsPage') },
      { path: 'campaigns', element: page(() => import('./pages/campaigns/CampaignsPage.tsx'), 'CampaignsPage') },
      { path: 'webhooks', element: page(() => import('./pages/webhooks/WebhooksPage.tsx'), 'WebhooksPage') },
      { path: 'team', element: page(() => import('./pages/team/TeamPage.tsx'), 'TeamPage') },
      { path: 'analytics', element: page(() => import('./pages/analytics/AnalyticsPage.tsx'), 'AnalyticsPage') },
      { path: 'usage', element: page(() => import('./pages/usage/UsagePage.tsx'), 'UsagePage') },
      { path: 'billing', element: page(() => import('./pages/billing/BillingPage.tsx'), 'BillingPage') },
      { path: 'api-keys', element: page(() => import('./pages/api-keys/ApiKeysPage.tsx'), 'ApiKeysPage') },
      { path: '*', element: <NotFoundPage /> },
    ],
  },
]);

export function App() {
  return (
    // "auto" follows prefers-color-scheme until the header's toggle chooses (kept in localStorage by Mantine's manager).
    <MantineProvider theme={theme} cssVariablesResolver={contrast} defaultColorScheme="auto" colorSchemeManager={colorSchemeManager}>
      <Notifications />
      <QueryClientProvider client={queryClient}>
        <RouterProvider router={router} />
      </QueryClientProvider>
    </MantineProvider>
  );
}
