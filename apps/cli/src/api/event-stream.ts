/**
 * The `data:` payloads of a server-sent events response (text/event-stream), parsed as JSON, as
 * they arrive; comments (keep-alives) are skipped. Ends when the response ends.
 */
export async function* eventStream<T>(response: Response): AsyncGenerator<{ event: string; data: T }> {
  const decoder = new TextDecoder();
  let carry = '';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    carry += decoder.decode(chunk, { stream: true });
    for (let end = carry.indexOf('\n\n'); end >= 0; end = carry.indexOf('\n\n')) {
      const block = carry.slice(0, end);
      carry = carry.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length) yield { event, data: JSON.parse(data.join('\n')) as T };
    }
  }
}
