FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
# Admin and API docs assets, served by the app itself (WhiteNoise); no settings secret is read.
RUN DEBUG=true python manage.py collectstatic --noinput --verbosity 0
# var/gazetteer-imports: a volume shared by web and worker (docker-compose.yml); made here so
# the volume starts owned by the user the service runs as.
RUN useradd --create-home app && mkdir -p /app/var/gazetteer-imports && chown -R app /app
USER app
EXPOSE 8000
CMD ["gunicorn", "delivery.wsgi:application", "-c", "gunicorn.conf.py"]
