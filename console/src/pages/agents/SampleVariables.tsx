import { useEffect, useState } from 'react';
import { Paper, SimpleGrid, Text, TextInput, Title } from '@mantine/core';
import { templateVariables } from './voiceProviders.ts';

const storageKey = (agentId: string) => `switchboard.sample-variables.${agentId}`;

/** The sample values kept in this browser for the agent's test calls. */
export function loadSampleValues(agentId: string): Record<string, string> {
  try { return JSON.parse(localStorage.getItem(storageKey(agentId)) ?? '{}') as Record<string, string>; } catch { return {}; }
}

/** The `{{variables}}` the prompt and first message use, each with a sample value for test calls (kept in local storage). */
export function SampleVariables({ agentId, prompt, firstMessage }: { agentId: string; prompt: string | null | undefined; firstMessage: string | null | undefined }) {
  const names = templateVariables(prompt, firstMessage);
  const [samples, setSamples] = useState<Record<string, string>>(() => loadSampleValues(agentId));
  useEffect(() => { localStorage.setItem(storageKey(agentId), JSON.stringify(samples)); }, [agentId, samples]);
  return (
    <Paper withBorder p="md" data-testid="variables">
      <Title order={2} size="h5" mb="xs">Variables</Title>
      {names.length === 0 ? (
        <Text size="sm" c="dimmed">Write <code>{'{{name}}'}</code> in the prompt or first message to fill it per call (a campaign contact's or a dial's variables).</Text>
      ) : (
        <SimpleGrid cols={{ base: 1, sm: 2 }}>
          {names.map((name) => (
            <TextInput key={name} label={`Sample value of {{${name}}}`} description="Used by test calls from this browser" value={samples[name] ?? ''}
              onChange={(e) => { const value = e.currentTarget.value; setSamples((s) => ({ ...s, [name]: value })); }} />
          ))}
        </SimpleGrid>
      )}
    </Paper>
  );
}
