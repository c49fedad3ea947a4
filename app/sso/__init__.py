"""Single sign-on: OpenID Connect and SAML 2.0 identity providers, configured by the
operator; what they assert becomes an account through app/data/external_identities.py."""
