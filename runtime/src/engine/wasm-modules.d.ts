// The echogarden WASM package ships no typings; the use site states the few functions it calls (the audio layer's modules use @ts-expect-error).
declare module '@echogarden/fvad-wasm';
