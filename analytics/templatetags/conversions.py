"""Revenue as people read it: minor units (what the API stores and answers) in the currency's
own major unit, `4990` EUR as `49.90 EUR`, `500` JPY as `500 JPY`."""

from __future__ import annotations

from django import template

register = template.Library()

# ISO 4217 currencies whose minor unit is not a hundredth (the rest: 2 decimals).
_DECIMALS = {
    **dict.fromkeys(
        [
            "BIF",
            "CLP",
            "DJF",
            "GNF",
            "ISK",
            "JPY",
            "KMF",
            "KRW",
            "PYG",
            "RWF",
            "UGX",
            "UYI",
            "VND",
            "VUV",
            "XAF",
            "XOF",
            "XPF",
        ],
        0,
    ),
    **dict.fromkeys(["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"], 3),
}


@register.filter
def money(amount: int | None, currency: str | None) -> str:
    """`amount` minor units of `currency`, e.g. "1,234.50 EUR"; "0" with no currency (no
    sale), "—" for no amount (several currencies: not added up)."""
    if amount is None:
        return "—"
    if not currency:
        return f"{amount:,}"
    decimals = _DECIMALS.get(currency, 2)
    sign = "-" if amount < 0 else ""
    whole, minor = divmod(abs(amount), 10**decimals)
    text = f"{whole:,}" if not decimals else f"{whole:,}.{minor:0{decimals}d}"
    return f"{sign}{text} {currency}"
