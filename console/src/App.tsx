import { MantineProvider, createTheme, type CSSVariablesResolver } from '@mantine/core';
import { Notifications } from '@mantine/notifications';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { RouterProvider, createBrowserRouter, Navigate } from 'react-router';
import { ApiError } from './api/client.ts';
import { AuthGate } from './auth/AuthGate.tsx';
import { SignInPage } from './pages/SignInPage.tsx';
import { Shell } from './layout/Shell.tsx';
import { CallsPage } from './pages/calls/CallsPage.tsx';
import { CallPage } from './pages/call/CallPage.tsx';
import { NotFoundPage } from './pages/NotFoundPage.tsx';

// Shades dark enough for AA contrast (axe): white on blue.8, and dimmed text in gray.7.
const theme = createTheme({ primaryColor: 'blue', primaryShade: 8, defaultRadius: 'md' });
const contrast: CSSVariablesResolver = () => ({ variables: {}, light: { '--mantine-color-dimmed': 'var(--mantine-color-gray-7)' }, dark: {} });

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 10_000,
      // A refusal (4xx) will not change by asking again.
      retry: (count, error) => !(error instanceof ApiError && error.status < 500) && count < 2,
    },
  },
});

const router = createBrowserRouter([
  { path: '/sign-in', element: <SignInPage /> },
  {
    element: <AuthGate><Shell /></AuthGate>,
    children: [
      { index: true, element: <Navigate to="/calls" replace /> },
      { path: 'calls', element: <CallsPage /> },
      { path: 'calls/:callSid', element: <CallPage /> },
      { path: '*', element: <NotFoundPage /> },
    ],
  },
]);

export function App() {
  return (
    <MantineProvider theme={theme} cssVariablesResolver={contrast}>
      <Notifications />
      <QueryClientProvider client={queryClient}>
        <RouterProvider router={router} />
      </QueryClientProvider>
    </MantineProvider>
  );
}
