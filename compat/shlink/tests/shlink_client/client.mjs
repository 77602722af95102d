// Drives the published Shlink JS SDK against a shorturl server, as a Shlink dashboard would.
// Usage: node client.mjs <before-visits|after-visits|orphans|limits|managed-domains|controls|
// redirect-rules>, with
// SHLINK_URL and SHLINK_API_KEY set.
// Prints one JSON object of what the SDK returned (errors as the problem documents it threw);
// compat/shlink/tests/test_shlink_sdk.py asserts on it. Between the two phases the test stores the visits.
import { ShlinkApiClient } from '@shlinkio/shlink-js-sdk';
import { FetchHttpClient } from '@shlinkio/shlink-js-sdk/fetch';

const baseUrl = process.env.SHLINK_URL;
const apiKey = process.env.SHLINK_API_KEY;
const api = new ShlinkApiClient(new FetchHttpClient(), { baseUrl, apiKey });
const PERSON = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36';
const BOT = 'Googlebot/2.1 (+http://www.google.com/bot.html)';
const SLUG = 'sdk-spring';

// An error the SDK throws is the server's problem document: kept as the answer.
const attempt = (promise) => promise.catch((problem) => ({ error: problem }));

async function beforeVisits() {
  const health = await api.health();
  const created = await api.createShortUrl({
    longUrl: 'https://example.com/spring',
    customSlug: SLUG,
    tags: ['sdk', 'Spring'],
    title: 'Spring sale',
  });
  const takenSlug = await attempt(api.createShortUrl({ longUrl: 'https://example.com/x', customSlug: SLUG }));
  const listed = await api.listShortUrls({ page: '1', itemsPerPage: 10, searchTerm: 'spring', tags: ['sdk'] });
  const edited = await api.updateShortUrl({ shortCode: SLUG }, { longUrl: 'https://example.com/summer' });
  const fetched = await api.getShortUrl({ shortCode: SLUG });
  const redirects = [];
  for (const userAgent of [PERSON, BOT]) {
    const response = await fetch(created.shortUrl, { redirect: 'manual', headers: { 'User-Agent': userAgent } });
    redirects.push({ status: response.status, location: response.headers.get('location') });
  }
  // A code that was never made: an orphan visit (invalid_short_url).
  const unknownCode = (await fetch(`${baseUrl}/sdk-missing`, { redirect: 'manual' })).status;
  const domains = await api.listDomains();
  const wrongKey = await attempt(
    new ShlinkApiClient(new FetchHttpClient(), { baseUrl, apiKey: 'su_wrong' }).listTags(),
  );
  return { health, created, takenSlug, listed, edited, fetched, redirects, unknownCode, domains, wrongKey };
}

async function afterVisits() {
  const visits = await api.getShortUrlVisits({ shortCode: SLUG }, { page: 1, itemsPerPage: 10 });
  const people = await api.getShortUrlVisits({ shortCode: SLUG }, { excludeBots: true });
  const tags = await api.listTags();
  const tagsStats = await api.tagsStats();
  const summary = (await api.getShortUrl({ shortCode: SLUG })).visitsSummary;
  const deleted = await api.deleteShortUrl({ shortCode: SLUG }).then(() => true);
  const afterDelete = await attempt(api.getShortUrl({ shortCode: SLUG }));
  const goneRedirect = (await fetch(`${baseUrl}/${SLUG}`, { redirect: 'manual' })).status;
  const listedAfterDelete = await api.listShortUrls({});
  return { visits, people, tags, tagsStats, summary, deleted, afterDelete, goneRedirect, listedAfterDelete };
}

// With a staff key (orphan visits are staff's): what the dashboard's orphan visits page reads.
async function orphans() {
  const overview = await api.getVisitsOverview();
  const invalid = await api.getOrphanVisits({ type: 'invalid_short_url', page: 1, itemsPerPage: 10 });
  const roots = await api.getOrphanVisits({ type: 'base_url' });
  return { overview, invalid, roots };
}

// The list filters a dashboard offers (links past their visit limit or their end date left out)
// and the domains a key may put links on. The test has made `sdk-expired` (past its end) and
// the domains; `sdk-capped` takes its one visit here, as a visitor's redirect.
async function limits() {
  const capped = await api.createShortUrl({
    longUrl: 'https://example.com/capped', customSlug: 'sdk-capped', maxVisits: 1,
  });
  await api.createShortUrl({ longUrl: 'https://example.com/open', customSlug: 'sdk-open' });
  const cappedRedirects = [];
  for (let visit = 0; visit < 2; visit++) {
    const response = await fetch(capped.shortUrl, { redirect: 'manual', headers: { 'User-Agent': PERSON } });
    cappedRedirects.push(response.status);
  }
  const codes = async (params) => (await api.listShortUrls(params)).data.map((link) => link.shortCode).sort();
  return {
    cappedRedirects,
    all: await codes({}),
    notMaxed: await codes({ excludeMaxVisitsReached: true }),
    notPast: await codes({ excludePastValidUntil: true }),
    neither: await codes({ excludeMaxVisitsReached: true, excludePastValidUntil: true }),
    domains: await api.listDomains(),
  };
}

// With a staff key: the domains as those who manage them see them.
async function managedDomains() {
  return { domains: await api.listDomains() };
}

// The controls of the web UI's short URL list: every order it offers, both tag modes, a span of
// creation dates (sent as the UI formats them, with an offset); and the default domain's health,
// which the SDK asks of the domain itself (the authority listDomains gave).
async function controls() {
  const codes = async (params) => (await api.listShortUrls(params)).data.map((link) => link.shortCode);
  const orders = {};
  for (const field of ['dateCreated', 'shortCode', 'longUrl', 'title', 'visits', 'nonBotVisits']) {
    for (const dir of ['ASC', 'DESC']) {
      orders[`${field}-${dir}`] = await codes({ orderBy: { field, dir } });
    }
  }
  const daysAgo = (days) => new Date(Date.now() - days * 86400000).toISOString().replace(/\.\d{3}Z$/, '+00:00');
  const byCode = { field: 'shortCode', dir: 'ASC' };
  const defaultDomain = (await api.listDomains()).data.find((domain) => domain.isDefault).domain;
  return {
    orders,
    anyTag: await codes({ tags: ['sale', 'red'], orderBy: byCode }),
    everyTag: await codes({ tags: ['sale', 'red'], tagsMode: 'all' }),
    span: await codes({ startDate: daysAgo(3), endDate: daysAgo(1) }),
    badDate: await attempt(api.listShortUrls({ startDate: 'yesterday' })),
    defaultDomain,
    defaultDomainHealth: await attempt(api.health({ domain: defaultDomain })),
  };
}

// A short URL's redirect rules as the web UI's rules page sets and reads them; a condition this
// server cannot match (browser) refused; visitors sent by the rules.
async function redirectRules() {
  const created = await api.createShortUrl({ longUrl: 'https://example.com/rules', customSlug: 'sdk-rules' });
  const shortCode = { shortCode: 'sdk-rules' };
  const set = await api.setShortUrlRedirectRules(shortCode, {
    redirectRules: [
      {
        longUrl: 'https://example.com/spring-on-android',
        conditions: [
          { type: 'device', matchKey: null, matchValue: 'android' },
          { type: 'query-param', matchKey: 'campaign', matchValue: 'spring' },
        ],
      },
      {
        longUrl: 'https://example.com/office',
        conditions: [{ type: 'ip-address', matchKey: null, matchValue: '127.0.*.*' }],
      },
    ],
  });
  const read = await api.getShortUrlRedirectRules(shortCode);
  const refused = await attempt(api.setShortUrlRedirectRules(shortCode, {
    redirectRules: [{ longUrl: 'https://example.com/chrome', conditions: [{ type: 'browser', matchKey: null, matchValue: 'chrome' }] }],
  }));
  const android = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36';
  const location = async (query, userAgent) => (
    await fetch(created.shortUrl + query, { redirect: 'manual', headers: { 'User-Agent': userAgent } })
  ).headers.get('location');
  return {
    set,
    read,
    refused,
    hasRedirectRules: (await api.getShortUrl(shortCode)).hasRedirectRules,
    androidInSpring: await location('?campaign=spring', android),
    fromHere: await location('', PERSON),
  };
}

const phases = {
  'before-visits': beforeVisits, 'after-visits': afterVisits, orphans, limits, 'managed-domains': managedDomains,
  controls, 'redirect-rules': redirectRules,
};
const phase = phases[process.argv[2]];
if (!phase) {
  console.error(`usage: node client.mjs ${Object.keys(phases).join('|')}`);
  process.exit(2);
}
try {
  console.log(JSON.stringify(await phase()));
} catch (error) {
  // An unexpected failure: whatever the SDK threw, for the test's message.
  // A failed fetch hides its reason (refused, reset, timed out) in `cause`: kept for the message.
  console.error(JSON.stringify(error instanceof Error
    ? { message: error.message, cause: String(error.cause ?? ''), stack: error.stack }
    : error));
  process.exit(1);
}
