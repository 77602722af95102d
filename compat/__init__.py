"""Other shorteners' APIs, each a thin layer over links' services and selectors (and analytics'
selectors for visits): they shape requests and answers, they never write rows themselves."""
