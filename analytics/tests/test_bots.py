"""Bot detection (analytics/bots.py) measured on public samples: see samples/SOURCES.md."""

from __future__ import annotations

import functools
import gzip
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from analytics import bots
from analytics.bots import NAME_MAX, Bot, BotKind, detect_bot, required_text

SAMPLES = Path(__file__).parent / "samples"


@functools.cache
def sample(name: str) -> tuple[str, ...]:
    data = (SAMPLES / name).read_bytes()
    if name.endswith(".gz"):
        data = gzip.decompress(data)
    return tuple(row["ua"] for row in json.loads(data))


@functools.cache
def crawler_list_examples() -> tuple[tuple[str, dict], ...]:
    """Every example User-Agent of the pinned crawler list, with its entry (excluded ones too)."""
    from crawleruseragents import CRAWLER_USER_AGENTS_DATA

    return tuple((ua, e) for e in CRAWLER_USER_AGENTS_DATA for ua in e.get("instances") or ())


def share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.2f}% ({part}/{whole})"


# --- recall and false positives on the samples ----------------------------------------------


def test_recall_on_the_crawler_list_is_at_least_98_percent():
    examples = crawler_list_examples()
    missed = [(ua, e["pattern"]) for ua, e in examples if detect_bot(ua) is None]
    recall = 1 - len(missed) / len(examples)
    assert recall >= 0.98, f"recall {share(len(examples) - len(missed), len(examples))}: {missed}"
    # the only misses are the people that the excluded entries describe
    assert {pattern for _, pattern in missed} <= bots.CRAWLER_LIST_EXCLUDED, missed


def test_recall_on_matomos_independent_bot_list_is_at_least_95_percent():
    uas = sample("matomo_bots.json.gz")
    missed = [ua for ua in uas if detect_bot(ua) is None]
    recall = 1 - len(missed) / len(uas)
    assert recall >= 0.95, f"recall {share(len(uas) - len(missed), len(uas))}, missed: {missed}"


@pytest.mark.parametrize(
    "name", ["npm_user_agents.json.gz", "top_user_agents.json", "matomo_browsers.json.gz"]
)
def test_at_most_half_a_percent_of_real_browsers_are_taken_for_bots(name):
    uas = sample(name)
    flagged = [(ua, detect_bot(ua)) for ua in uas if detect_bot(ua)]
    assert len(flagged) / len(uas) <= 0.005, f"{share(len(flagged), len(uas))}: {flagged}"


def test_in_app_browsers_and_ios_browsers_from_matomos_fixtures_are_people():
    uas = sample("matomo_in_app.json.gz")
    assert len(uas) > 500
    assert [(ua, detect_bot(ua)) for ua in uas if detect_bot(ua)] == []


PEOPLE = {
    "WeChat iOS": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Mobile/15E148 MicroMessenger/8.0.49(0x18003137) NetType/WIFI "
    "Language/zh_CN",
    # WeChat's X5 engine says "Process/tools", which isbot takes for a tool
    "WeChat Android": "Mozilla/5.0 (Linux; Android 8.1; COR-AL10 Build/HUAWEICOR-AL10; wv) "
    "AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/57.0.2987.132 MQQBrowser/6.2 "
    "TBS/044408 Mobile Safari/537.36 MMWEBID/347 MicroMessenger/7.0.1380(0x2700003A) "
    "Process/tools NetType/WIFI Language/zh_CN",
    "Instagram iOS": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Mobile/15E148 Instagram 337.0.3.23.54 (iPhone14,5; iOS 17_5; en_US; "
    "en; scale=3.00; 1170x2532; 614183446)",
    # the Android build id AP3A.240617.008 is an entry of the crawler list (excluded)
    "Instagram Android": "Mozilla/5.0 (Linux; Android 15; CPH2557 Build/AP3A.240617.008; wv) "
    "AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/142.0.7444.142 Mobile "
    "Safari/537.36 Instagram 406.0.0.58.159 Android (35/15; 480dpi; 1080x2400; OPPO; CPH2557; "
    "OP573DL1; mt6833; en_MY; 822918295; IABMV/1) NV/1",
    "Facebook iOS": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/471.0.0.37.99;FBBV/619419458;"
    "FBDV/iPhone14,5;FBMD/iPhone;FBSN/iOS;FBSV/17.5;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5]",
    "Facebook Android": "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240605.024; wv) "
    "AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/126.0.6478.71 Mobile "
    "Safari/537.36 [FB_IAB/FB4A;FBAV/469.0.0.48.74;]",
    "Facebook (MetaIAB)": "Mozilla/5.0 (Linux; Android 16; Pixel 10 Pro XL "
    "Build/CP1A.260305.018; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 "
    "Chrome/146.0.7680.174 Mobile Safari/537.36 MetaIAB Facebook",
    "Messenger (Dalvik)": "Dalvik/2.1.0 (Linux; U; Android 15; Pixel 8 Pro Build/AP3A.241005.015)"
    " [FBAN/Orca-Android;FBAV/482.0.0.71.108;FBPN/com.facebook.orca;FBLC/de_DE;FBBV/658301643;"
    "FBCR/Telekom.de;FBMF/Google;FBBD/google;FBDV/Pixel 8 Pro;FBSV/15;FBCA/arm64-v8a:null;"
    "FBDM/{density=2.25,width=1008,height=2244};FB_FW/1;]",
    "LINE iOS": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Mobile/15E148 Safari Line/14.9.0",
    "LINE Android": "Mozilla/5.0 (Linux; Android 13; SM-A536E Build/TP1A.220624.014; wv) "
    "AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/125.0.6422.165 Mobile "
    "Safari/537.36 Line/14.8.1/IAB",
    # Viber's in-app browser; its link-preview fetcher sends "Viber" alone (a bot, below)
    "Viber Android": "Mozilla/5.0 (Linux; Android 16; SM-F966N; BP2A.250605.031.A3; wv) "
    "AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/145.0.7632.120 Mobile "
    "Safari/537.36 Viber/27.4.0.0",
    # "Sogou" alone is the search engine's spider in the crawler list
    "Sogou browser": "Mozilla/5.0 (Linux; Android 6.0.1; OPPO R9s Plus Build/MMB29M; wv) "
    "AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/68.0.3440.106 Mobile "
    "Safari/537.36 AWP/2.0 SogouMSE,SogouMobileBrowser/5.28.7",
    "Firefox iOS": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) FxiOS/127.0 Mobile/15E148 Safari/605.1.15",
    "Edge iOS": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.0 EdgiOS/126.2592.56 Mobile/15E148 Safari/605.1.15",
    "Chrome iOS": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) CriOS/126.0.6478.153 Mobile/15E148 Safari/604.1",
    "Chrome iPad": "Mozilla/5.0 (iPad; CPU OS 17_6_1 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) CriOS/148.0.7778.166 Mobile/15E148 Safari/604.1",
    "Google app iOS": "Mozilla/5.0 (iPad; CPU OS 15_6 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) GSA/319.0.638705450 Mobile/15E148 Safari/604.1",
    "Safari macOS": "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.0 Safari/605.1.15",
    "Fluid (site-specific browser)": "Mozilla/5.0 (Macintosh; U; Intel Mac OS X 10_5_6; en-us) "
    "AppleWebKit/528.16 (KHTML, like Gecko) Fluid/0.9.6 Safari/528.16",
    # phones whose model names contain words of isbot's patterns
    "CUBOT phone": "Mozilla/5.0 (Linux; Android 9; CUBOT X19 Build/PPR1.180610.011) "
    "AppleWebKit/537.36 (KHTML, like Gecko) Chrome/74.0.3729.157 Mobile Safari/537.36",
    "M bot phone": "Mozilla/5.0 (Linux; Android 7.0; M bot 54) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Chrome/78.0.3904.96 Mobile Safari/537.36",
    "XBot phone": "Mozilla/5.0 (Linux; Android 8.1.0; XBot Junior) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Chrome/87.0.4280.101 Mobile Safari/537.36",
    "Newsday phone": "Mozilla/5.0 (Linux; Android 8.1.0; Newsday_E1) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Chrome/84.0.4147.125 Mobile Safari/537.36",
    "Discovery phone": "Mozilla/5.0 (Linux; Android 4.4.2; GM Discovery II) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Chrome/81.0.4044.138 Mobile Safari/537.36",
}


@pytest.mark.parametrize("ua", PEOPLE.values(), ids=PEOPLE.keys())
def test_people_are_not_bots(ua):
    assert detect_bot(ua) is None


def test_an_empty_user_agent_is_not_a_bot():
    # nothing to name or classify, and privacy proxies strip the header from people's requests
    assert detect_bot("") is None


# --- what the issue named, and every kind ---------------------------------------------------

CHROME = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/120.0.0.0 Safari/537.36"
)
ISSUE_13_MISSES = [
    ("meta-externalfetcher/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)",
     Bot("meta-externalfetcher", BotKind.SOCIAL)),
    ("Viber", Bot("Viber", BotKind.SOCIAL)),
    ("Mozilla/5.0 (Linux; U; Android 2.3.4; generic) AppleWebKit/537.36 (KHTML, like Gecko; "
     "Google Web Preview) Version/4.0 Mobile Safari/537.36",
     Bot("Google Web Preview", BotKind.SOCIAL)),
    # the crawler list tags AdSense's crawler "advertising", which is none of our kinds
    ("Mediapartners-Google", Bot("Mediapartners-Google", BotKind.OTHER)),
    ("Mozilla/5.0 (X11; Linux x86_64; Storebot-Google/1.0) AppleWebKit/537.36 (KHTML, like "
     "Gecko) Chrome/79.0.3945.88 Safari/537.36", Bot("Storebot-Google", BotKind.SEARCH)),
    ("Mozilla/5.0 (compatible; Google-Site-Verification/1.0)",
     Bot("Google-Site-Verification", BotKind.SEARCH)),
    ("Mozilla/5.0 (compatible; coccoc/1.0; +http://help.coccoc.com/)",
     Bot("coccoc", BotKind.SEARCH)),
    ("anthropic-ai", Bot("anthropic-ai", BotKind.AI)),
    ("cohere-ai", Bot("cohere-ai", BotKind.AI)),
    ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; "
     "+Claude-User@anthropic.com)", Bot("Claude-User", BotKind.AI)),
    ("curl", Bot("curl", BotKind.HTTP_LIBRARY)),
    (f"{CHROME} Playwright/1.40.0", Bot("Playwright", BotKind.AUTOMATION)),
    (f"{CHROME}; Selenium", Bot("Selenium", BotKind.AUTOMATION)),
]  # fmt: skip


@pytest.mark.parametrize(("ua", "bot"), ISSUE_13_MISSES, ids=[b.name for _, b in ISSUE_13_MISSES])
def test_the_bots_missed_before_are_found_with_their_kind(ua, bot):
    assert detect_bot(ua) == bot


BY_KIND = {
    BotKind.SEARCH: [
        ("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "Googlebot"),
        ("Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, "
         "like Gecko) Chrome/120.0.6099.216 Mobile Safari/537.36 (compatible; Googlebot/2.1; "
         "+http://www.google.com/bot.html)", "Googlebot"),
        ("Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", "bingbot"),
        ("Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)", "YandexBot"),
        ("Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)",
         "Baiduspider"),
        ("DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)", "DuckDuckBot"),
        ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like "
         "Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)",
         "Applebot"),
        ("Sogou web spider/4.0(+http://www.sogou.com/docs/help/webmasters.htm#07)", "Sogou"),
    ],
    BotKind.SOCIAL: [
        ("Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", "Slackbot-LinkExpanding"),
        ("Twitterbot/1.0", "Twitterbot"),
        ("facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
         "facebookexternalhit"),
        ("WhatsApp/2.23.20.0 A", "WhatsApp"),
        ("TelegramBot (like TwitterBot)", "TelegramBot"),
        ("Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)", "Discordbot"),
        ("LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)",
         "LinkedInBot"),
        ("Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5", "SkypeUriPreview"),
        ("Pinterest/0.2 (+https://www.pinterest.com/bot.html)", "Pinterest"),
        ("Mozilla/5.0 (compatible; redditbot/1.0; +http://www.reddit.com/feedback)", "redditbot"),
        ("ViberUrlDownloader", "ViberUrlDownloader"),
        # iMessage's link preview
        ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_1) AppleWebKit/601.2.4 (KHTML, like "
         "Gecko) Version/9.0.1 Safari/601.2.4 facebookexternalhit/1.1 Facebot Twitterbot/1.0",
         "facebookexternalhit"),
    ],
    BotKind.MONITORING: [
        ("Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)", "UptimeRobot"),
        ("Pingdom.com_bot_version_1.4_(http://www.pingdom.com/)", "Pingdom.com_bot_version_1.4"),
        ("StatusCake_Uptime_Checker/1.0", "StatusCake_Uptime_Checker"),
        ("Datadog Agent/7.69.2", "Datadog Agent"),
        ("Site24x7", "Site24x7"),
        ("Better Uptime Bot Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML,"
         " like Gecko) Chrome/74.0.3729.169 Safari/537.36", "Better Uptime Bot"),
    ],
    BotKind.AI: [
        ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; "
         "+https://openai.com/gptbot)", "GPTBot"),
        ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; "
         "+https://openai.com/bot", "ChatGPT-User"),
        ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; "
         "+claudebot@anthropic.com)", "ClaudeBot"),
        ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; "
         "+https://perplexity.ai/perplexitybot)", "PerplexityBot"),
        ("Mozilla/5.0 (compatible; Google-Extended/1.0; +http://www.google.com/bot.html)",
         "Google-Extended"),
        ("Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile "
         "Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)", "Bytespider"),
        ("CCBot/2.0 (https://commoncrawl.org/faq/)", "CCBot"),
        ("meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/"
         "crawler)", "meta-externalagent"),
    ],
    BotKind.HTTP_LIBRARY: [
        ("curl/8.4.0", "curl"),
        ("Wget/1.21.4", "Wget"),
        ("python-requests/2.31.0", "python-requests"),
        ("Python-urllib/3.11", "Python-urllib"),
        ("python-httpx/0.27.0", "python-httpx"),
        ("Python/3.11 aiohttp/3.9.1", "aiohttp"),
        ("Go-http-client/2.0", "Go-http-client"),
        ("okhttp/4.12.0", "okhttp"),
        ("axios/1.6.2", "axios"),
        ("node-fetch/1.0 (+https://github.com/bitinn/node-fetch)", "node-fetch"),
        ("Apache-HttpClient/4.5.14 (Java/17.0.2)", "Apache-HttpClient"),
        ("libwww-perl/6.72", "libwww-perl"),
        ("HTTPie/3.2.2", "HTTPie"),
    ],
    BotKind.AUTOMATION: [
        ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
         "HeadlessChrome/120.0.0.0 Safari/537.36", "HeadlessChrome"),
        ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
         "Chrome/120.0.0.0 Safari/537.36 Puppeteer", "Puppeteer"),
        ("Mozilla/5.0 (Unknown; Linux x86_64) AppleWebKit/538.1 (KHTML, like Gecko) "
         "PhantomJS/2.1.1 Safari/538.1", "PhantomJS"),
        (f"{CHROME} Playwright/1.40.0", "Playwright"),
    ],
    # bots the crawler list tags otherwise (seo, advertising, …) or does not list at all
    BotKind.OTHER: [
        ("Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)", "AhrefsBot"),
        ("Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)",
         "SemrushBot"),
        ("facebookcatalog/1.0", "facebookcatalog"),
        ("Mozilla/5.0 (compatible; Examplebot/0.1; +https://example.org/bot)", "Examplebot"),
        ("Mozilla/5.0 (compatible; Andibot/1.0)", "Andibot"),
    ],
}  # fmt: skip


@pytest.mark.parametrize(
    ("ua", "name", "kind"),
    [(ua, name, kind) for kind, cases in BY_KIND.items() for ua, name in cases],
)
def test_each_kind_with_real_user_agents(ua, name, kind):
    assert detect_bot(ua) == Bot(name, kind)


def test_every_kind_is_covered():
    assert set(BY_KIND) == set(BotKind)


def test_a_kind_is_a_plain_value_the_model_can_store():
    bot = detect_bot("curl/8.4.0")
    assert type(bot.kind) is str
    assert bot.kind in BotKind.values


def test_under_55_percent_of_the_crawler_list_is_of_kind_other():
    found = [detect_bot(ua) for ua, _ in crawler_list_examples()]
    kinds = Counter(bot.kind for bot in found if bot)
    other = kinds[BotKind.OTHER] / sum(kinds.values())
    report = ", ".join(f"{kind} {share(n, sum(kinds.values()))}" for kind, n in kinds.most_common())
    assert other <= 0.55, report
    assert all(kinds[kind] for kind in BotKind), report


def test_names_are_short_and_never_empty():
    uas = [ua for ua, _ in crawler_list_examples()] + list(sample("matomo_bots.json.gz"))
    names = [bot.name for bot in map(detect_bot, uas) if bot]
    assert all(0 < len(name) <= NAME_MAX for name in names)
    assert all(name.strip() == name for name in names)


# --- the hand-kept rules: only what the sources lack -----------------------------------------

HAND_KEPT_CASES = [
    ("Java/17.0.2", "Java", BotKind.HTTP_LIBRARY),
    ("Java/1.8.0_392", "Java", BotKind.HTTP_LIBRARY),
    ("PostmanRuntime/7.36.0", "PostmanRuntime", BotKind.HTTP_LIBRARY),
    ("node", "Node.js fetch", BotKind.HTTP_LIBRARY),
    ("undici", "Node.js fetch", BotKind.HTTP_LIBRARY),
    ("Pinterestbot/1.0", "Pinterestbot", BotKind.SOCIAL),
    ("Mozilla/5.0 (compatible; Pinterestbot/1.0; +http://www.pinterest.com/bot.html)",
     "Pinterestbot", BotKind.SOCIAL),
    ("Quora Link Preview/1.0 (http://www.quora.com)", "Quora Link Preview", BotKind.SOCIAL),
]  # fmt: skip


@pytest.mark.parametrize(("ua", "name", "kind"), HAND_KEPT_CASES)
def test_hand_kept_rules_name_and_classify_what_the_crawler_list_lacks(ua, name, kind):
    assert detect_bot(ua) == Bot(name, kind)
    # no entry of the list matches where the hand-kept rule does, or before (Pinterestbot's
    # contact URL does match the list's entry for "Pinterest/0.2", further on)
    rule = next(p for p, n, k in bots.HAND_KEPT if re.search(p, ua, re.IGNORECASE))
    at = re.search(rule, ua, re.IGNORECASE).start()
    listed = [e["pattern"] for e in bots.crawler_list_entries() if re.search(e["pattern"], ua)]
    assert all(re.search(pattern, ua).start() > at for pattern in listed), listed


def test_every_hand_kept_rule_has_a_case():
    for pattern, name, kind in bots.HAND_KEPT:
        assert any(
            re.search(pattern, ua, re.IGNORECASE) and (n, k) == (name, kind)
            for ua, n, k in HAND_KEPT_CASES
        ), pattern


# One User-Agent for each token of the hand-kept list that analytics/enrich.py had before this
# module (BOT_TOKENS): the maintained sources now find all of them.
FORMER_BOT_TOKENS = [
    "Slackbot 1.0 (+https://api.slack.com/robots)",
    "Slack-ImgProxy (+https://api.slack.com/robots)",
    "Twitterbot/1.0",
    "facebookexternalhit/1.1",
    "facebookcatalog/1.0",
    "meta-externalagent/1.1",
    "WhatsApp/2.2349.50 i",
    "TelegramBot (like TwitterBot)",
    "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
    "LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)",
    "Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5",
    "Pinterestbot/1.0",
    "Mozilla/5.0 (compatible; redditbot/1.0; +http://www.reddit.com/feedback)",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)",
    "Mozilla/5.0 (compatible; Embedly/0.2; +http://support.embed.ly/)",
    "Iframely/1.3.1 (+https://iframely.com/docs/about)",
    "Mozilla/5.0 (compatible; vkShare; +http://vk.com/dev/Share)",
    "Quora Link Preview/1.0 (http://www.quora.com)",
    "bitlybot/3.0 (+http://bit.ly/)",
    "Mattermost-Bot/1.1",
    "Mozilla/5.0 (compatible; ZoominfoBot (zoominfobot at zoominfo dot com))",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko; "
    "Google-PageRenderer Google (+https://developers.google.com/+/web/snippet/)) Chrome/120 "
    "Safari/537.36",
    "Mozilla/5.0 (compatible; Google-InspectionTool/1.0)",
    "Mozilla/5.0 (compatible; GoogleOther)",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "BingPreview/1.0b",
    f"{CHROME} Edg/120.0.0.0 MicrosoftPreview/2.0 +https://aka.ms/MicrosoftPreview",
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "HeadlessChrome/120.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Unknown; Linux x86_64) AppleWebKit/538.1 (KHTML, like Gecko) PhantomJS/2.1.1",
    f"{CHROME} Chrome-Lighthouse",
    "curl/8.4.0",
    "Wget/1.21.4",
    "python-requests/2.31.0",
    "Python-urllib/3.11",
    "python-httpx/0.27.0",
    "Python/3.11 aiohttp/3.9.1",
    "Go-http-client/2.0",
    "Java/17.0.2",
    "Apache-HttpClient/4.5.14 (Java/17.0.2)",
    "okhttp/4.12.0",
    "libwww-perl/6.72",
    "node-fetch/1.0 (+https://github.com/bitinn/node-fetch)",
    "axios/1.6.2",
    "HTTPie/3.2.2",
    "PostmanRuntime/7.36.0",
    "Mozilla/5.0 (compatible; Examplebot/1.0; +https://example.org/bot)",  # "+https://…"
    "ExampleCrawler/2.0",  # "crawler"
    "Example Spider",  # "spider"
]


@pytest.mark.parametrize("ua", FORMER_BOT_TOKENS)
def test_every_formerly_hand_kept_token_is_still_a_bot(ua):
    assert detect_bot(ua) is not None


# --- the index that spares searching every pattern ------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        ("Googlebot", "Googlebot"),
        (r"meta-externalagent\/", "meta-externalagent/"),
        (r"^Apache-HttpClient", "Apache-HttpClient"),
        (r"BlogTraffic\/\d\.\d+ Feed-Fetcher", " Feed-Fetcher"),
        (r"[wW]get", "get"),
        (r"(?<! cu)bots?(?:\b|_)", "bot"),
        (r"^\w*search\b", "search"),
        (r"Chirp|gotosocial", ""),  # alternatives: nothing is required
        (r"colou?r", "colo"),
        (r"ab{2,3}c", "a"),
        (r"x\x41yz", ""),  # a code escape is not read as text
        (r"(?:foo){e<=1}bar", ""),  # nor is `regex`'s fuzzy matching
        (r"\p{L}+bot", ""),
    ],
)
def test_required_text_is_what_every_match_contains(pattern, text):
    assert required_text(pattern) == text


def test_the_index_offers_every_pattern_that_matches():
    """Searching only the indexed candidates finds what searching every pattern would."""
    named, generic = bots._matchers()
    examples = crawler_list_examples()
    uas = [ua for ua, _ in examples] + list(sample("matomo_bots.json.gz"))
    rules = {rule.regex.pattern: position for position, rule in enumerate(named.rules)}
    for ua, entry in examples:
        position = rules.get(entry["pattern"])
        if position is not None and named.rules[position].regex.search(ua):
            assert position in named.candidates(bots.grams_of(ua)), (entry["pattern"], ua)
    for ua in uas:
        offered = set(generic.candidates(bots.grams_of(ua)))
        for position, rule in enumerate(generic.rules):
            if position not in offered:
                assert not rule.regex.search(ua), (rule.regex.pattern, ua)
