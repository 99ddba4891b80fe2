FROM python:3.12-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    PHYSALIGN_VAR_DIR=/app/var
WORKDIR /app

# pg_dump/pg_restore for `manage.py backup`/`restore` must be as new as the server (compose runs postgres:17;
# bookworm ships 15), so the client comes from the PostgreSQL project's apt repository.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && install -d /usr/share/postgresql-common/pgdg \
 && curl -fsSL -o /usr/share/postgresql-common/pgdg/apt.postgresql.org.asc https://www.postgresql.org/media/keys/ACCC4CF8.asc \
 && echo "deb [signed-by=/usr/share/postgresql-common/pgdg/apt.postgresql.org.asc] https://apt.postgresql.org/pub/repos/apt bookworm-pgdg main" \
      > /etc/apt/sources.list.d/pgdg.list \
 && apt-get update \
 && apt-get install -y --no-install-recommends tesseract-ocr libpq5 postgresql-client-17 \
 && apt-get purge -y curl && apt-get autoremove -y && rm -rf /var/lib/apt/lists/*

COPY pyproject.toml README.md ./
RUN pip install --upgrade pip && pip install -e .
COPY . .
RUN DJANGO_SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput \
 && useradd --create-home --uid 1000 physalign && mkdir -p /app/var/media /app/var/backups && chown -R physalign /app/var
USER physalign
EXPOSE 8000
CMD ["gunicorn", "physalign_site.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3"]
