/** eSpeak NG compiled by Emscripten (the package ships no types): the factory of its module. */
declare module '@echogarden/espeak-ng-emscripten' {
  const createModule: () => Promise<Record<string, unknown>>;
  export default createModule;
}
