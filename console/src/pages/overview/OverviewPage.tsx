import { Badge, Button, Group, Paper, Progress, Skeleton, Stack, Text, ThemeIcon, Title } from '@mantine/core';
import { Link } from 'react-router';
import { useOnboarding, type OnboardingStep } from './onboarding.ts';

const WHY: Record<string, string> = {
  credits: 'Calls are paid from prepaid credits; a new organization starts with none.',
  integration: 'Your telephony or speech provider account, with its credentials checked right away.',
  agent: 'Its prompt, voice, language and the tools it may use.',
  talk: 'Hear how it sounds in the browser before anyone calls it.',
  number: 'Import a number and route it to the agent.',
  call: 'The first real call shows up here with its transcript, recording and cost.',
};

/** The home page: the first-run checklist, each step read from the organization's real state. */
export function OverviewPage() {
  const { steps, doneCount, pending } = useOnboarding(true);
  const next = steps.find((s) => s.done === false);
  return (
    <Stack maw={760}>
      <Title order={1}>Get started</Title>
      <Text>From an empty organization to an agent that answers the phone, in six steps.</Text>
      <Group gap="sm" align="center">
        <Progress value={(doneCount / steps.length) * 100} w={240} aria-label="Steps done" />
        <Text size="sm" data-testid="onboarding-progress">{doneCount} of {steps.length} done</Text>
      </Group>
      {!pending && doneCount === steps.length ? (
        <Paper withBorder p="md" role="status"><Text fw={600}>You are set up.</Text><Text size="sm">Your agent answers calls; follow them on the Calls and Analytics pages.</Text></Paper>
      ) : null}
      <Stack component="ol" gap="sm" p={0} m={0} style={{ listStyle: 'none' }} aria-label="Setup checklist">
        {steps.map((step, index) => <StepRow key={step.key} step={step} index={index} isNext={step === next} />)}
      </Stack>
    </Stack>
  );
}

function StepRow({ step, index, isNext }: { step: OnboardingStep; index: number; isNext: boolean }) {
  const state = step.done === undefined ? (step.unknown ? 'unknown' : 'loading') : step.done ? 'done' : 'todo';
  return (
    <Paper component="li" withBorder p="md" data-testid={`step-${step.key}`} data-state={state} aria-current={isNext ? 'step' : undefined}>
      <Group justify="space-between" wrap="nowrap" align="flex-start">
        <Group wrap="nowrap" align="flex-start">
          <ThemeIcon radius="xl" size="lg" variant={step.done ? 'filled' : 'light'} color={step.done ? 'green.9' : 'gray'} aria-hidden>
            {step.done ? '✓' : index + 1}
          </ThemeIcon>
          <div>
            <Group gap="xs">
              <Text fw={600}>{step.title}</Text>
              {state === 'done' ? <Badge variant="default">Done</Badge> : null}
              {state === 'unknown' ? <Badge variant="default">Ask an admin</Badge> : null}
            </Group>
            <Text size="sm" c="dimmed">{WHY[step.key]}</Text>
          </div>
        </Group>
        {state === 'loading' ? <Skeleton height={30} width={130} /> : state === 'done' ? null : (
          <Button component={Link} to={step.to} variant={isNext ? 'filled' : 'default'} size="xs">{step.action}</Button>
        )}
      </Group>
    </Paper>
  );
}
