import { useState } from 'react';
import { Button, Group, Paper, Progress, Stack, Text, TextInput, Textarea } from '@mantine/core';
import { Dropzone } from '@mantine/dropzone';
import { useMutation } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../../api/client.ts';
import { uploadWithProgress } from '../../api/upload.ts';
import { ErrorAlert } from '../../components/ErrorAlert.tsx';
import { fieldError } from '../../components/apiErrors.ts';

const ACCEPT = ['application/pdf', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'text/plain', 'text/markdown', 'text/html', 'text/csv'];

interface Upload { name: string; progress: number; error?: unknown }

/** Drop files (or pick them): each is uploaded with a progress bar; indexing then shows in the list. */
export function UploadZone({ onUploaded }: { onUploaded: () => void }) {
  const [uploads, setUploads] = useState<Upload[]>([]);
  const update = (name: string, change: Partial<Upload>) => setUploads((list) => list.map((u) => (u.name === name ? { ...u, ...change } : u)));
  const upload = async (file: File) => {
    setUploads((list) => [...list.filter((u) => u.name !== file.name), { name: file.name, progress: 0 }]);
    const form = new FormData();
    form.append('name', file.name);
    form.append('file', file);
    try {
      await uploadWithProgress<{ data: Schemas['CreatedDocument'] }>('/api/knowledge-base', form, (progress) => update(file.name, { progress }));
      update(file.name, { progress: 1 });
      onUploaded();
      setTimeout(() => setUploads((list) => list.filter((u) => u.name !== file.name || u.error)), 1500);
    } catch (error) {
      update(file.name, { error });
    }
  };
  return (
    <Stack gap="xs">
      <Dropzone onDrop={(files) => files.forEach((f) => void upload(f))} accept={ACCEPT} maxSize={50 * 1024 * 1024} aria-label="Upload documents">
        <Group justify="center" mih={90}>
          <div>
            <Text ta="center" fw={600}>Drop documents here, or click to choose</Text>
            <Text ta="center" size="sm" c="dimmed">PDF, Word (.docx), text, Markdown, HTML or CSV; up to 50 MB each</Text>
          </div>
        </Group>
      </Dropzone>
      {uploads.map((u) => (
        <Paper key={u.name} withBorder p="xs">
          <Text size="sm">{u.name}</Text>
          {u.error ? <ErrorAlert error={u.error} title="Upload refused" /> : <Progress value={u.progress * 100} aria-label={`Uploading ${u.name}`} />}
        </Paper>
      ))}
    </Stack>
  );
}

export function TextDocumentForm({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState('');
  const [text, setText] = useState('');
  const create = useMutation({ mutationFn: () => unwrap(api.POST('/api/knowledge-base', { body: { name, text } as never })), onSuccess: onCreated });
  return (
    <Paper withBorder p="md" component="form" onSubmit={(e: React.FormEvent) => { e.preventDefault(); create.mutate(); }}>
      <Stack>
        <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} error={fieldError(create.error, 'name')} />
        <Textarea label="Text" required autosize minRows={4} value={text} onChange={(e) => setText(e.currentTarget.value)} error={fieldError(create.error, 'text')} />
        <ErrorAlert error={create.error} />
        <Group><Button type="submit" loading={create.isPending}>Add text</Button></Group>
      </Stack>
    </Paper>
  );
}
