-- The sqlite3 program (configs/sweeps/programs.ini): joins, aggregates with group_concat,
-- window functions, an index built and dropped, a temporary table, sorting of strings;
-- then updates and deletes in a transaction that is rolled back (the file is a copy).
.headers off
SELECT count(*), sum(qty), round(sum(qty * price), 2) FROM orders JOIN item ON item.id = orders.item;
SELECT c.city, count(*), round(sum(o.qty * i.price), 2), max(c.name)
  FROM orders o JOIN customer c ON c.id = o.customer JOIN item i ON i.id = o.item
  GROUP BY c.city ORDER BY 3 DESC LIMIT 10;
CREATE INDEX o_day ON orders(day, customer);
SELECT day, count(*), group_concat(DISTINCT customer % 10) FROM orders WHERE day BETWEEN 100 AND 160
  GROUP BY day ORDER BY day;
CREATE TEMP TABLE spend AS
  SELECT customer, sum(qty * price) AS s, count(*) AS n FROM orders JOIN item ON item.id = orders.item
  GROUP BY customer;
SELECT customer, round(s, 2), n, rank() OVER (ORDER BY s DESC) FROM spend ORDER BY s DESC LIMIT 15;
SELECT cat, count(*), round(avg(s), 3) FROM spend JOIN orders USING (customer) JOIN item ON item.id = orders.item
  GROUP BY cat ORDER BY cat;
SELECT length(group_concat(name, ';')) FROM (SELECT name FROM customer ORDER BY substr(name, 11), id);
SELECT count(*), count(DISTINCT note), max(length(note)) FROM orders WHERE note IS NOT NULL;
SELECT i.title, sum(o.qty) OVER (PARTITION BY i.cat ORDER BY o.day ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) AS w
  FROM orders o JOIN item i ON i.id = o.item WHERE o.customer < 300 ORDER BY w DESC, o.id LIMIT 10;
DROP INDEX o_day;
BEGIN;
UPDATE orders SET note = coalesce(note, '') || printf('-%d', qty) WHERE id % 3 = 0;
DELETE FROM orders WHERE id % 7 = 0;
SELECT count(*), sum(length(note)) FROM orders;
ROLLBACK;
SELECT count(*) FROM orders;
