"""Mail leaving the platform: delivering the outbox (app/data/mail.py queues it) by SMTP,
or to a folder in the data directory where no SMTP server is set."""
