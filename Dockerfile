FROM python:3.12-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    PHYSALIGN_VAR_DIR=/app/var
WORKDIR /app

RUN apt-get update \
 && apt-get install -y --no-install-recommends tesseract-ocr libpq5 \
 && rm -rf /var/lib/apt/lists/*

COPY pyproject.toml README.md ./
RUN pip install --upgrade pip && pip install -e .
COPY . .
RUN DJANGO_SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput \
 && useradd --create-home --uid 1000 physalign && mkdir -p /app/var/media && chown -R physalign /app/var
USER physalign
EXPOSE 8000
CMD ["gunicorn", "physalign_site.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3"]
