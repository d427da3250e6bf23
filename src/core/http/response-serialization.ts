import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type SerializerFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']>;
type Serialize = (data: unknown) => string;
type CompileSerializer = (route: { schema: unknown; method?: string; url?: string; httpStatus?: string }) => Serialize;

/**
 * The `schemaController.compilersFactory.buildSerializer` of the app: Fastify's own response
 * serializers (fast-json-stringify), each compiled on its first response instead of at start-up.
 * The generated code of every route's response schemas was most of the idle server's ~15 MB of
 * compiled schemas (bench/memory.ts), for routes a given process may never answer. A schema that
 * cannot compile fails its route's first answer instead of the start; test/schemas-compile.test.ts
 * builds the app with every schema compiled at once (`eager`) to prove they all compile.
 */
export function responseSerializerFactory({ eager = false }: { eager?: boolean } = {}): SerializerFactory {
  const fastifys = (SerializerSelector as unknown as () => (externalSchemas: unknown, options: unknown) => CompileSerializer)();
  const factory = (externalSchemas: unknown, options: unknown): CompileSerializer => {
    const compile = fastifys(externalSchemas, options);
    return (route) => {
      let serialize = eager ? compile(route) : undefined;
      return (data) => (serialize ??= compile(route))(data);
    };
  };
  return factory as unknown as SerializerFactory;
}
