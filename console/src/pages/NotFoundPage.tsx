import { Anchor, Stack, Text, Title } from '@mantine/core';
import { Link } from 'react-router';

export function NotFoundPage() {
  return (
    <Stack>
      <Title order={1}>Page not found</Title>
      <Text>Nothing lives at this address. <Anchor component={Link} to="/calls" underline="always">Back to the calls</Anchor></Text>
    </Stack>
  );
}
