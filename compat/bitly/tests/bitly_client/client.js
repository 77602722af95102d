// Drives the npm `bitly` client (pinned in package.json) against a live shorturl and prints, as
// one JSON document, what each call gave back: compat/bitly/tests/test_bitly_client.py asserts on it.
//
// Environment: BITLY_TOKEN (an API key), BITLY_API_HOST (the client's `apiUrl`: a host name,
// reached over HTTPS on port 443), BITLY_DOMAIN (the client's `domain`), LONG_URL (a URL the
// caller already shortened) and NEW_URL (one not shortened yet).
"use strict";

const { BitlyClient } = require("bitly");

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

// A refusal as the client raises it: the answer's JSON body (or the transport error's message).
const refusal = async (call) => {
  try {
    return { answered: await call() };
  } catch (error) {
    return { refused: error && error.message !== undefined && error.description !== undefined
      ? error
      : { transport: String(error && error.message ? error.message : error) } };
  }
};

async function main() {
  const config = { apiUrl: env("BITLY_API_HOST"), domain: env("BITLY_DOMAIN") };
  const bitly = new BitlyClient(env("BITLY_TOKEN"), config);
  // As a newcomer would write it: no `domain` option, so the client sends "bit.ly".
  const plain = new BitlyClient(env("BITLY_TOKEN"), { apiUrl: config.apiUrl });

  const out = {};
  out.existing = await bitly.shorten(env("LONG_URL"));
  out.created = await plain.shorten(env("NEW_URL"));
  out.info = await bitly.info(out.existing.link); // the client rewrites it to bit.ly/<code>
  out.getBitlink = await bitly.getBitlink(out.created.id);
  out.expanded = await bitly.expand(out.existing.id);
  out.updated = await bitly.bitlyRequest(
    `bitlinks/${out.created.id}`,
    { title: "Made by the npm client", tags: ["npm", "bitly"] },
    "PATCH",
  );
  out.created_with_title = await bitly.bitlyRequest("bitlinks", {
    long_url: env("NEW_URL") + "?with=title",
    title: "Titled",
  });
  // Bitly's deeplinks, each naming its os (#28): the layer maps them onto the app links.
  out.created_with_deeplinks = await bitly.bitlyRequest("bitlinks", {
    long_url: env("NEW_URL") + "?with=deeplinks",
    deeplinks: [
      { os: "ios", app_uri_path: "exampleshop://product/7", install_type: "no_install" },
      { os: "android", app_uri_path: "https://shop.example.com/app/product/7" },
    ],
  });
  out.badDeeplink = await refusal(() =>
    bitly.bitlyRequest("bitlinks", {
      long_url: env("NEW_URL") + "?with=bad-deeplink",
      deeplinks: [{ os: "ios", app_uri_path: "javascript:alert(1)" }],
    }),
  );
  out.clicks = await bitly.clicks(out.existing.id);
  out.clicksByDay = await bitly.clicksByDay(out.existing.link);
  out.summary = await bitly.bitlyRequest(
    `bitlinks/${out.existing.id}/clicks/summary`,
    { unit: "day", units: -1 },
    "GET",
  );
  out.notFound = await refusal(() => bitly.info("bit.ly/Zz9Zz9Zz"));
  out.badUrl = await refusal(() => bitly.shorten("ftp://files.example.com/a.pdf"));
  out.byMinute = await refusal(() => bitly.clicksByMinute(out.existing.id));
  out.wrongToken = await refusal(() =>
    new BitlyClient("su_not-a-key", config).info(out.existing.id));
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((error) => {
  const data = error && error.response ? error.response.data : undefined;
  process.stderr.write(`client failed: ${error && error.stack ? error.stack : JSON.stringify(error)}\n`);
  if (data !== undefined) process.stderr.write(`answer: ${JSON.stringify(data)}\n`);
  process.exit(1);
});
