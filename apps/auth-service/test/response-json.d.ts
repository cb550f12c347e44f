// Tests read many JSON bodies and assert their shape with expect(); typing each one adds nothing.
declare global {
  interface Response {
    json(): Promise<any>;
  }
}
export {};
